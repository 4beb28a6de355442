import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toy_service import helpdesk, offline_module, seed_state  # noqa: F401 - fixtures
