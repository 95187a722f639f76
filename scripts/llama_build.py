"""The llama.cpp build for this machine's CPU: which variant, its CMake flags, a cached wheel's variant.

Runtime variant dispatch (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS) would compile ~13 CPU backends,
several times the 12-minute setup budget on 2 cores, so scripts/setup.sh builds one variant per machine
kind and caches its wheel per variant. The runtime check of an installed build against the CPU is
rag/models/cpu.py; this script uses its tables.

Standard library only: setup.sh runs it (`python3 scripts/llama_build.py variant`) before anything is
installed.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.models.cpu import (  # noqa: E402 - the repository root first, as nothing is installed yet
    OPTION_FLAGS,
    VARIANTS,
    Build,
    cpu_flags,
    installed_build,
    missing_flags,
    parse_build_options,
    required_flags,
)


def pick_variant(flags: frozenset[str]) -> str:
    """The best variant whose every required flag the CPU has."""
    for name, options in VARIANTS.items():
        if required_flags(options) <= flags:
            return name
    return "sse42"


def cmake_args(variant: str) -> str:
    """CMAKE_ARGS for llama-cpp-python's build of `variant`: every x86 option set explicitly, and
    without the multimodal library (libmtmd: this project loads text models only; ~1/4 of the
    compile)."""
    on = set(VARIANTS[variant])
    flags = " ".join(f"-D{name}={'ON' if name in on else 'OFF'}" for name in OPTION_FLAGS)
    return f"-DGGML_NATIVE=OFF {flags} -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF"


def wheel_build(wheel: Path) -> Build | None:
    """The build options a llama-cpp-python wheel file records; None when it records none."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            name = next((n for n in zf.namelist() if n.endswith("/ggml-config.cmake")), None)
            if name is None:
                return None
            return Build(Path(name), parse_build_options(zf.read(name).decode("utf-8")))
    except (OSError, zipfile.BadZipFile):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="llama.cpp CPU build variants (used by scripts/setup.sh).")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("variant", help="the best variant for this CPU")
    args_p = sub.add_parser("cmake-args", help="CMAKE_ARGS of a variant")
    args_p.add_argument("variant", choices=sorted(VARIANTS))
    sub.add_parser("installed", help="the variant of the installed llama-cpp-python ('none' if unknown)")
    wheel_p = sub.add_parser("wheel-variant", help="the variant of a wheel file ('none' if unknown)")
    wheel_p.add_argument("wheel", type=Path)
    sub.add_parser("check", help="exit 1 when the installed build needs flags this CPU lacks")
    args = ap.parse_args(argv)
    if args.command == "variant":
        print(pick_variant(cpu_flags()))
    elif args.command == "cmake-args":
        print(cmake_args(args.variant))
    elif args.command == "installed":
        build = installed_build()
        print(build.variant if build else "none")
    elif args.command == "wheel-variant":
        build = wheel_build(args.wheel)
        print(build.variant if build else "none")
    else:
        build = installed_build()
        lacking = missing_flags(build) if build else frozenset()
        if lacking:
            print(f"llama-cpp-python needs CPU flags this CPU lacks: {' '.join(sorted(lacking))}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
