"""PNG plots of a report: metrics per configuration with CI error bars, latency, calibration."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .summary import HEADLINE_ANSWER, HEADLINE_RETRIEVAL

logger = logging.getLogger(__name__)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def _bars(ax: Any, configs: dict[str, Any], metrics: list[str], title: str) -> None:
    """Grouped bars: one group per metric, one bar per configuration, CI as error bars."""
    n = max(len(configs), 1)
    width = 0.8 / n
    for i, (name, c) in enumerate(configs.items()):
        xs, ys, lo, hi = [], [], [], []
        for j, m in enumerate(metrics):
            stat = c["metrics"].get(m)
            if not stat:
                continue
            xs.append(j + (i - (n - 1) / 2) * width)
            ys.append(stat["mean"])
            ci = stat.get("ci") or [stat["mean"], stat["mean"]]
            lo.append(max(stat["mean"] - ci[0], 0.0))
            hi.append(max(ci[1] - stat["mean"], 0.0))
        ax.bar(xs, ys, width=width, yerr=[lo, hi], capsize=3, label=name)
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels(metrics, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def _metric_figure(section: dict[str, Any], headline: list[str], path: Path) -> Path | None:
    if not section:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(section), figsize=(6 * len(section), 4.2), squeeze=False)
    for ax, (ds, configs) in zip(axes[0], section.items(), strict=True):
        metrics = [m for m in headline if any(m in c["metrics"] for c in configs.values())]
        _bars(ax, configs, metrics, f"{ds} (95% CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _latency_figure(answers: dict[str, Any], path: Path) -> Path | None:
    """Box plots of first-token and total time per configuration and dataset."""
    labels, ttft, total = [], [], []
    for ds, configs in answers.items():
        for cfg, c in configs.items():
            s = c.get("latency_samples", {})
            labels.append(f"{cfg}\n{ds}")
            ttft.append(s.get("ttft_ms") or [0.0])
            total.append(s.get("total_ms") or [0.0])
    if not labels:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, data, title in (
        (axes[0], ttft, "time to first token (ms, LLM called)"),
        (axes[1], total, "total time per question (ms)"),
    ):
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _calibration_figure(cal: dict[str, Any], path: Path) -> Path:
    """Histograms of best dense cosine for answerable and unanswerable questions, with thresholds."""
    import numpy as np

    plt = _pyplot()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    bins = np.linspace(-0.1, 1.0, 45)
    for name, vs in cal["samples"]["answerable"].items():
        ax.hist(vs, bins=bins, alpha=0.5, label=f"answerable: {name}")
    unans = [v for vs in cal["samples"]["unanswerable"].values() for v in vs]
    ax.hist(unans, bins=bins, alpha=0.6, label="unanswerable", color="black", histtype="step", linewidth=1.5)
    for t, style, label in (
        (cal["current"]["threshold"], ":", "current"),
        (cal["recommended"]["threshold"], "--", "recommended"),
    ):
        ax.axvline(t, color="red", linestyle=style, label=f"{label} {t:.2f}")
    ax.set_xlabel("best dense cosine similarity")
    ax.set_ylabel("questions")
    ax.legend(fontsize=8)
    ax.set_title("distribution of best_dense")
    ts = [s["threshold"] for s in cal["sweep"]]
    for name in cal["answerable"]:
        ax2.plot(ts, [s["false_refusal"][name] for s in cal["sweep"]], label=f"false refusals: {name}")
    ax2.plot(
        ts, [s["refusal_unanswerable"] for s in cal["sweep"]], label="refused unanswerable", color="black"
    )
    ax2.axvline(cal["recommended"]["threshold"], color="red", linestyle="--")
    ax2.set_xlabel("refusal threshold")
    ax2.set_ylabel("share refused before the LLM")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(report: dict[str, Any], folder: Path) -> dict[str, Path]:
    """Every plot the report has data for, as PNG files in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path | None] = {
        "retrieval": _metric_figure(report["retrieval"], HEADLINE_RETRIEVAL, folder / "retrieval.png"),
        "answers": _metric_figure(
            report["answers"],
            [m for m in HEADLINE_ANSWER if m != "tokens_per_answer"],
            folder / "answers.png",
        ),
        "latency": _latency_figure(report["answers"], folder / "latency.png"),
    }
    if report.get("calibration"):
        made["calibration"] = _calibration_figure(report["calibration"], folder / "calibration.png")
    return {k: v for k, v in made.items() if v is not None}
