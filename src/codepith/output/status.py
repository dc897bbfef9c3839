"""The index status as a compact report for an agent."""

from __future__ import annotations

import time
from typing import Any

from codepith.files.names import show_example, show_name


def format_status(st: Any) -> str:
    """``st`` is a ``codepith.api.IndexStatus`` (duck-typed: output/ sits below the API)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.refreshed_at)) if st.refreshed_at else "never"
    lines = [
        "repository: " + ", ".join(show_name(str(r)) for r in st.roots),
        f"content: {st.content}  model: {st.model} ({st.model_digest[:12]})",
        f"files: {st.files}  chunks: {st.chunks}",
        "languages: " + (", ".join(f"{lang} {n}" for lang, n in st.languages.items()) or "none"),
        f"last refresh: {when}",
    ]
    skipped = st.skipped
    lines.append(f"skipped: {skipped.total} files" + (":" if skipped.total else ""))
    for why, n in sorted(skipped.counts.items(), key=lambda kv: -kv[1]):
        examples = ", ".join(show_example(e) for e in skipped.examples.get(why, []))
        lines.append(f"  {why}: {n}" + (f" (e.g. {examples})" if examples else ""))
    lines.extend(st.notes)
    fallbacks = st.fallbacks
    if fallbacks.total:
        lines.append(f"line windows after a chunking error: {fallbacks.total} files:")
        for why, n in sorted(fallbacks.counts.items(), key=lambda kv: -kv[1]):
            examples = ", ".join(show_example(e) for e in fallbacks.examples.get(why, []))
            lines.append(f"  {why}: {n}" + (f" (e.g. {examples})" if examples else ""))
    return "\n".join(lines)
