"""Budgets that cannot silently cut: SFT's max_length fits the longest sample, precision follows the CPU."""

import pytest

from training.common import cpu_has_native_bf16
from training.sft import fit_max_length


def test_max_length_is_kept_when_every_sample_fits():
    assert fit_max_length([100, 900, 1024], 1024, "raise") == 1024
    assert fit_max_length([100, 900], None, "raise") is None


def test_a_longer_sample_extends_max_length_to_the_longest():
    assert fit_max_length([100, 2233, 1450], 1024, "extend") == 2233


def test_a_longer_sample_stops_the_run_when_asked_to():
    with pytest.raises(ValueError, match=r"2 of 3 samples are longer than max_length=1024 \(longest: 2233"):
        fit_max_length([100, 2233, 1450], 1024, "raise")
    with pytest.raises(ValueError, match="on_overflow"):
        fit_max_length([1], 10, "truncate")


@pytest.mark.parametrize(("flags", "native"), [
    ("fpu sse2 avx2 avx512f", False),
    ("fpu avx512f avx512_bf16", True),
    ("fpu amx_tile amx_bf16", True),
    ("", False),
])
def test_bf16_only_where_the_cpu_computes_it_natively(flags, native):
    cpuinfo = f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"
    assert cpu_has_native_bf16(cpuinfo) is native
