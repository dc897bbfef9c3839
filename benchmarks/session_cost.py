"""What codepith adds to every agent session, in characters and estimated tokens.

    python benchmarks/session_cost.py

An agent pays for the MCP server's ``tools/list`` and ``instructions``, the instruction block that
``codepith install`` writes into AGENTS.md / CLAUDE.md, and the sub-agent's one-line description (Claude
Code lists sub-agents in its Task tool) at the start of every session. Tokens are estimated at 4
characters a token (the estimate codepith's savings log uses) and counted with the bundled model's
WordPiece tokenizer, which splits code and punctuation finer than the BPE tokenizers agents use.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer

import codepith
from codepith.agents.texts import CHARS_PER_TOKEN, SUBAGENT_DESCRIPTION, instruction_block
from codepith.surfaces.mcp.schemas import INSTRUCTIONS, TOOLS


def main() -> None:
    tok = Tokenizer.from_file(str(Path(codepith.__file__).parent / "model" / "data" / "tokenizer.json"))
    tok.no_truncation()  # the model's tokenizer stops at 512 tokens; count them all
    parts = {
        "tools/list (" + ", ".join(t["name"] for t in TOOLS) + ")": json.dumps({"tools": TOOLS}, separators=(",", ":")),
        "server instructions": INSTRUCTIONS,
        "instruction block (AGENTS.md / CLAUDE.md)": instruction_block(),
        "sub-agent description": SUBAGENT_DESCRIPTION,
    }
    print(f"| part | characters | tokens (chars/{CHARS_PER_TOKEN}) | WordPiece tokens |")
    print("| --- | ---: | ---: | ---: |")
    total = [0, 0, 0]
    for name, text in parts.items():
        row = [len(text), -(-len(text) // CHARS_PER_TOKEN), len(tok.encode(text, add_special_tokens=False).ids)]
        total = [a + b for a, b in zip(total, row, strict=True)]
        print(f"| {name} | {row[0]:,} | {row[1]:,} | {row[2]:,} |")
    print(f"| **total per session** | {total[0]:,} | {total[1]:,} | {total[2]:,} |")


if __name__ == "__main__":
    main()
