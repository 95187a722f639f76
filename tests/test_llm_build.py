"""The llama.cpp build matches the CPU (refused before it can crash), and the answer prompt's fixed
prefix is evaluated once, not per question: real local model, no fakes."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

from rag import prompts
from rag.answer.engine import answer_messages
from rag.errors import ConfigError
from rag.models.cpu import OPTION_FLAGS, VARIANTS, Build, installed_build, missing_flags
from rag.models.llm import LocalLlamaCpp, bundled_gguf, check_cpu_build
from rag.types import Source

REPO = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = REPO / "scripts" / "llama_build.py"


def _build_script():
    """scripts/llama_build.py as a module (setup runs it as a script)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("llama_build", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_script = _build_script()
cmake_args, pick_variant = _script.cmake_args, _script.pick_variant
AVX2_CPU = frozenset({"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"})
AVX512_CPU = AVX2_CPU | {
    "avx512f",
    "avx512cd",
    "avx512vl",
    "avx512dq",
    "avx512bw",
    "avx512vbmi",
    "avx512_vnni",
    "avx512_bf16",
}


def _build(variant: str) -> Build:
    return Build(Path("ggml-config.cmake"), {name: name in VARIANTS[variant] for name in OPTION_FLAGS})


# -- the CPU check ----------------------------------------------------------------------------------
def test_installed_build_is_a_known_variant_this_cpu_runs() -> None:
    build = installed_build()
    assert build is not None, "llama-cpp-python records no ggml-config.cmake"
    assert build.variant in VARIANTS
    assert missing_flags(build) == frozenset()
    check_cpu_build()  # accepts the build this machine runs


def test_an_avx512_build_is_refused_on_an_avx2_cpu_with_a_clear_error() -> None:
    with pytest.raises(ConfigError) as err:
        check_cpu_build(flags=AVX2_CPU, build=_build("avx512"))
    message = str(err.value)
    assert "avx512f" in message and "avx512" in message and "scripts/setup.sh" in message
    check_cpu_build(flags=AVX512_CPU, build=_build("avx512"))
    check_cpu_build(flags=AVX512_CPU, build=_build("avx2"))


def test_the_installed_build_is_refused_by_a_cpu_without_its_flags() -> None:
    build = installed_build()
    assert build is not None
    with pytest.raises(ConfigError, match="avx2"):
        check_cpu_build(flags=frozenset({"sse4_2"}), build=build)


def test_the_variant_follows_the_cpu_and_never_builds_native_or_amx() -> None:
    assert pick_variant(AVX512_CPU) == "avx512"
    assert pick_variant(AVX512_CPU - {"avx512_bf16"}) == "avx2"  # AVX-512 without BF16: portable
    assert pick_variant(AVX2_CPU | {"amx_tile", "amx_int8"}) == "avx2"
    assert pick_variant(frozenset({"sse4_2"})) == "sse42"
    for variant in VARIANTS:
        args = cmake_args(variant)
        assert "-DGGML_NATIVE=OFF" in args and "AMX_TILE=ON" not in args and "AMX_INT8=ON" not in args


def test_setup_can_pick_the_variant_with_the_standard_library_only() -> None:
    """setup.sh runs scripts/llama_build.py with the system python before anything is installed."""
    out = subprocess.run(
        [sys.executable, "-S", "-I", str(BUILD_SCRIPT), "cmake-args", "avx512"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "-DGGML_AVX512=ON" in out.stdout and "-DGGML_AVX512_BF16=ON" in out.stdout


# -- the fixed prompt prefix -------------------------------------------------------------------------
def _sources(topic: str) -> list[Source]:
    return [
        Source(
            number=n,
            paper_id=f"{topic}-{n}",
            title=f"{topic.title()} study {n}",
            text=f"We study {topic} in setting {n}. Our method improves {topic} by {n} points.",
            score=1.0,
        )
        for n in range(1, 4)
    ]


def _fresh(llm: LocalLlamaCpp) -> None:
    llm._llama().reset()
    llm._pinned = None
    llm._last_prompt = []


@pytest.fixture(scope="module")
def local_llm() -> LocalLlamaCpp:
    return LocalLlamaCpp(model_path=str(bundled_gguf()), n_ctx=2048, max_tokens=4)


def test_the_second_question_evaluates_only_what_follows_the_fixed_prefix(local_llm: LocalLlamaCpp) -> None:
    _fresh(local_llm)
    local_llm.chat(answer_messages("How is graph invariance learned?", _sources("graph invariance")))
    first = local_llm.last_timings
    local_llm.chat(answer_messages("How does model merging work?", _sources("model merging")))
    second = local_llm.last_timings
    reused = second["prompt_tokens"] - second["prompt_eval_tokens"]
    system = len(local_llm._llama().tokenize(prompts.load("system").encode(), add_bos=False))
    assert first["prompt_eval_tokens"] >= first["prompt_tokens"] - 1  # nothing to reuse yet
    assert reused >= system  # at least the system message came from the KV cache
    assert second["prompt_eval_tokens"] < first["prompt_eval_tokens"]


def test_the_fixed_prefix_survives_an_unrelated_call_in_between(local_llm: LocalLlamaCpp) -> None:
    _fresh(local_llm)
    local_llm.chat(answer_messages("How is graph invariance learned?", _sources("graph invariance")))
    local_llm.chat(answer_messages("How does model merging work?", _sources("model merging")))
    local_llm.complete("Hello")  # e.g. the server's warm-up, or a condensing call
    local_llm.chat(answer_messages("What makes diffusion models fast?", _sources("diffusion sampling")))
    after = local_llm.last_timings
    system = len(local_llm._llama().tokenize(prompts.load("system").encode(), add_bos=False))
    assert after["prompt_tokens"] - after["prompt_eval_tokens"] >= system


def test_a_restored_prefix_answers_exactly_as_a_kept_one(local_llm: LocalLlamaCpp) -> None:
    questions = [
        ("How is graph invariance learned?", "graph invariance"),
        ("How does model merging work?", "model merging"),
        ("What makes diffusion models fast?", "diffusion sampling"),
    ]
    runs = []
    for interleave in (False, True):
        _fresh(local_llm)
        for i, (question, topic) in enumerate(questions):
            if interleave and i == len(questions) - 1:
                local_llm.complete("Hello")
            out = local_llm.chat(answer_messages(question, _sources(topic)), max_tokens=12)
        runs.append((out.message.content, local_llm.last_timings["prompt_eval_tokens"]))
    assert runs[0] == runs[1]


@pytest.mark.slow
def test_weight_copies_are_made_once_and_f16_answers_exactly_as_the_bundled_file(tmp_path, monkeypatch) -> None:
    """RAG_LLM__LOCAL_WEIGHTS: copies of the bundled Q4_1 file in another format, made once in the
    cache. The f16 copy's greedy output equals the bundled file's; the q8_0 and q4_0 copies (q4_0, the
    default: the 4-bit type llama.cpp repacks for its x86 matrix kernels; speeds in
    benchmarks/bench_generation.py) are models of that type that answer. An unknown format is a
    clear error."""
    import llama_cpp
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    from rag.models.llm import LocalLlamaCpp, bundled_gguf, weights_copy

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    copies = {kind: weights_copy(bundled_gguf(), kind) for kind in ("f16", "q8_0", "q4_0")}
    for kind, copy in copies.items():
        assert copy.parent == tmp_path / "iclr-rag" / "models" and copy.name.endswith(f".{kind}.gguf")
        assert (copy.stat().st_size > bundled_gguf().stat().st_size) == (kind != "q4_0")  # Q4_0 has no offsets
        mtime = copy.stat().st_mtime_ns
        assert weights_copy(bundled_gguf(), kind) == copy and copy.stat().st_mtime_ns == mtime  # made once
    with pytest.raises(ConfigError, match="unknown local weight format 'q2'"):
        weights_copy(bundled_gguf(), "q2")

    messages = [ChatMessage(role=MessageRole.USER, content="Name one use of lifelong learning in theorem proving.")]
    weights = ("f16", "as_is", "q8_0", "q4_0")
    llms = {w: LocalLlamaCpp(model_path=str(bundled_gguf()), weights=w, max_tokens=40) for w in weights}
    assert LocalLlamaCpp(model_path=str(bundled_gguf())).weights == "q4_0"
    texts = {w: llm.chat(messages).message.content for w, llm in llms.items()}
    assert texts["f16"] and texts["f16"] == texts["as_is"]
    for kind in ("q8_0", "q4_0"):
        desc = ctypes.create_string_buffer(128)
        llama_cpp.llama_model_desc(llms[kind]._model.model, desc, 128)
        assert kind.upper() in desc.value.decode() and len(texts[kind].split()) >= 3, (kind, texts[kind])
