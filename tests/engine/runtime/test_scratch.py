"""Scratch folders whose owner process was killed are swept; live ones and foreign ones are left alone."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import SandboxedExecutor
from compoworld_assets.engine.runtime.scratch import OWNER_FILE, ScratchFolder, sweep_orphans

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from compoworld_assets.engine.runtime.executor import SandboxLimits
    from compoworld_assets.engine.runtime.sandbox import trusted_executor
    executor = trusted_executor("def handle(state, tool, args):\\n    return {}\\n",
                                SandboxLimits(scratch_root=Path(sys.argv[1])))
    print(executor.scratch_dir, flush=True)
    time.sleep(600)
""")


def hold(root: Path) -> tuple[subprocess.Popen, Path]:
    """A process holding a sandboxed service's scratch folder under ``root``; the folder."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdout=subprocess.PIPE, text=True)
    work = Path(holder.stdout.readline().strip())
    assert work.is_dir(), "the holder did not start its service"
    return holder, work.parent


def test_a_killed_owners_folder_is_swept_and_a_live_owners_is_kept(tmp_path):
    live, live_folder = hold(tmp_path)
    killed, killed_folder = hold(tmp_path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert killed_folder.exists(), "a SIGKILLed process cleans nothing up"
        assert sweep_orphans(tmp_path) == [killed_folder]
        assert not killed_folder.exists()
        assert live_folder.exists() and (live_folder / OWNER_FILE).exists()
    finally:
        live.kill()
        live.wait(timeout=30)
    assert sweep_orphans(tmp_path) == [live_folder]


def test_the_first_service_a_process_starts_under_a_root_sweeps_it(tmp_path):
    killed, folder = hold(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    source = "def handle(state, tool, args):\n    return {'success': True, 'data': {}}\n"
    with SandboxedExecutor(source, SandboxLimits(scratch_root=tmp_path), trusted=True, lazy=True) as executor:
        assert executor.scratch_dir is None and folder.exists(), "a lazy service makes no folder until it starts"
        executor.call("ping", {})
        assert not folder.exists()
        assert executor.scratch_dir.is_dir()
    assert list(tmp_path.iterdir()) == []


def test_folders_without_an_owner_file_are_never_swept(tmp_path):
    unowned = tmp_path / "cw-old-abc123"
    unowned.mkdir()
    (unowned / "data.txt").write_text("kept")
    other = tmp_path / "something-else"
    other.mkdir()
    held = ScratchFolder("svc", tmp_path)
    assert sweep_orphans(tmp_path) == []
    assert unowned.exists() and other.exists() and held.path.is_dir()
    held.remove()
    assert not held.folder.exists()
