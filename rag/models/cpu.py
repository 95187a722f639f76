"""Whether the installed llama.cpp build fits this CPU: checked before the model is loaded.

llama.cpp compiled for instructions the CPU lacks dies with SIGILL, not an exception. Setup picks one
build variant from the CPU's flags (scripts/llama_build.py), and `missing_flags()` compares the CPU
with the options the installed wheel records in its own `lib/cmake/ggml/ggml-config.cmake`: a wheel
built elsewhere (a shared home, a copied venv) is refused with a clear error instead of crashing.

Standard library only: scripts/llama_build.py imports it before anything is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

# ggml's x86 CMake options → the /proc/cpuinfo flags the compiler flags they add require
# (vendor/llama.cpp/ggml/src/ggml-cpu/CMakeLists.txt: GGML_AVX512 adds -mavx512f/cd/vl/dq/bw).
OPTION_FLAGS: dict[str, tuple[str, ...]] = {
    "GGML_SSE42": ("sse4_2",),
    "GGML_AVX": ("avx",),
    "GGML_AVX2": ("avx2",),
    "GGML_FMA": ("fma",),
    "GGML_F16C": ("f16c",),
    "GGML_BMI2": ("bmi2",),
    "GGML_AVX_VNNI": ("avx_vnni",),
    "GGML_AVX512": ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"),
    "GGML_AVX512_VBMI": ("avx512vbmi",),
    "GGML_AVX512_VNNI": ("avx512_vnni",),
    "GGML_AVX512_BF16": ("avx512_bf16",),
    "GGML_AMX_TILE": ("amx_tile",),
    "GGML_AMX_INT8": ("amx_int8",),
    "GGML_AMX_BF16": ("amx_bf16",),
}

_AVX2 = ("GGML_SSE42", "GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2")
# Best first. Never GGML_NATIVE (it can emit what a VM traps) and never AMX (a kernel or hypervisor
# may not enable its tile state even when cpuinfo lists it).
VARIANTS: dict[str, tuple[str, ...]] = {
    "avx512": _AVX2 + ("GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16"),
    "avx2": _AVX2,
    "sse42": ("GGML_SSE42",),
}


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The instruction-set flags of this CPU (empty when /proc/cpuinfo is unreadable)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def required_flags(options: dict[str, bool] | tuple[str, ...]) -> frozenset[str]:
    """The CPU flags a build with these options (name → on) needs."""
    on = [name for name in options if not isinstance(options, dict) or options[name]]
    return frozenset(flag for name in on for flag in OPTION_FLAGS.get(name, ()))


def parse_build_options(config_text: str) -> dict[str, bool]:
    """The GGML_* options (and GGML_NATIVE) a ggml-config.cmake records."""
    names = set(OPTION_FLAGS) | {"GGML_NATIVE"}
    found = re.findall(r'^set\((GGML_[A-Z0-9_]+) "(ON|OFF)"\)', config_text, flags=re.M)
    return {name: value == "ON" for name, value in found if name in names}


@dataclass(frozen=True)
class Build:
    """The CPU options the installed llama-cpp-python was compiled with."""

    config: Path
    options: dict[str, bool]

    @property
    def native(self) -> bool:
        return self.options.get("GGML_NATIVE", False)

    @property
    def required(self) -> frozenset[str]:
        return required_flags({k: v for k, v in self.options.items() if k in OPTION_FLAGS})

    @property
    def variant(self) -> str:
        """The VARIANTS name these options match, else "native" or "custom"."""
        if self.native:
            return "native"
        on = {k for k, v in self.options.items() if v and k in OPTION_FLAGS}
        return next((name for name, opts in VARIANTS.items() if set(opts) == on), "custom")


def installed_build(distribution: str = "llama_cpp_python") -> Build | None:
    """The installed wheel's recorded build options; None when it records none (or is absent)."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name == "ggml-config.cmake":
            path = Path(str(dist.locate_file(entry)))
            try:
                return Build(path, parse_build_options(path.read_text(encoding="utf-8")))
            except OSError:
                return None
    return None


def missing_flags(build: Build, flags: frozenset[str] | None = None) -> frozenset[str]:
    """Flags `build` needs that the CPU (default: this one) lacks; empty means it is safe to load.

    A native build records no explicit options: its needs are unknown, so it is not refused here."""
    cpu = cpu_flags() if flags is None else flags
    if not cpu:  # not Linux, or no flags line: nothing to compare against
        return frozenset()
    return build.required - cpu
