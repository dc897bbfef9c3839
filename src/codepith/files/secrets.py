"""Secrets never leave: files that hold credentials, found by name and by content.

The same verdict guards indexing (the walk and ``read_text``) and reads (``output/read.py``), in every
content mode, and no ``!`` line in ``.codepithignore`` overrides it: an index, and an agent reading
through it, has no business with keys.

The content rules are a port, as data, of high-confidence rules from gitleaks' maintained rule set
(https://github.com/gitleaks/gitleaks, ``config/gitleaks.toml``; rule ids kept), plus two
credential-file shapes gitleaks finds by other means (service-account JSON, ``.npmrc`` auth lines).
Only rules with a fixed, distinctive shape are ported: entropy-based "generic" rules would skip real
code. detect-secrets was measured as a dependency and rejected: its default plugins scan 0.024 MB/s
(166 aiohttp files, 2.9 MB, 120 s), hundreds of times slower than indexing. Each rule carries literal
keywords (as gitleaks' rules do) so that the regexes run only on text that contains one: scanning
costs a few substring searches per file.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

REASON = "secret"

# Files that commonly hold credentials, by exact name (any case-sensitive match) or suffix.
SECRET_NAMES = frozenset(
    {
        ".env", ".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd", ".git-credentials",
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
        "credentials.json", "service-account.json", "secrets.json", ".dockercfg",
        "secrets.yml", "secrets.yaml", "credentials", ".boto", ".s3cfg",
    }
)  # fmt: skip
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".gpg", ".asc")
ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"})


@dataclass(frozen=True)
class Rule:
    """One content rule: a gitleaks rule id, literal keywords that must occur, and the pattern (compiled on
    first use: most processes never meet a keyword, and compiling them all costs ~0.1 s at start)."""

    id: str
    keywords: tuple[str, ...]
    source: str

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)


@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _rule(rule_id: str, keywords: tuple[str, ...], pattern: str) -> Rule:
    return Rule(rule_id, keywords, pattern)


RULES: tuple[Rule, ...] = (
    # gitleaks "private-key": a PEM or OpenSSH private-key block with a body (a bare header in a parser's
    # source is not a key).
    _rule(
        "private-key",
        ("PRIVATE KEY",),
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?KEY(?: BLOCK)?-----",
    ),
    # a Google service-account key file: gitleaks' "gcp-service-account" looks for the type field; a key is
    # a "private_key" next to a "client_email".
    _rule(
        "gcp-service-account",
        ('"client_email"',),
        r'"private_key"\s*:\s*"-----BEGIN[\s\S]*"client_email"|"client_email"[\s\S]*"private_key"\s*:\s*"-----BEGIN',
    ),
    # .npmrc auth lines (gitleaks "npm-access-token" covers the npm_ token shape below)
    _rule("npmrc-auth-token", ("_authToken",), r"(?m)_authToken\s*=\s*[^\s$]\S{7,}"),
    _rule("npm-access-token", ("npm_",), r"\bnpm_[a-z0-9]{36}\b"),
    # gitleaks "aws-access-token" and an AWS secret-key assignment (the 40-character secret after its name)
    # (gitleaks also lists the rare ABIA/ACCA/A3T prefixes; each keyword costs a pass over every file)
    _rule("aws-access-token", ("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b"),
    _rule(
        "aws-secret-access-key",
        ("secret_access_key", "SECRET_ACCESS_KEY", "ecretAccessKey"),
        r"(?i)(?:aws_?)?secret_?access_?key['\"]?\s*[:=]\s*['\"]?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
    # gitleaks "github-pat", "github-fine-grained-pat", "github-oauth", "github-app-token", "github-refresh-token"
    _rule("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[0-9a-zA-Z]{36}\b"),
    _rule("github-fine-grained-pat", ("github_pat_",), r"\bgithub_pat_\w{82}\b"),
    _rule("gitlab-pat", ("glpat-",), r"\bglpat-[\w-]{20}\b"),
    _rule("slack-token", ("xox",), r"\bxox[baprs]-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*"),
    _rule(
        "slack-webhook-url",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{43,46}",
    ),
    _rule("stripe-access-token", ("k_live_",), r"\b[rs]k_live_[a-zA-Z0-9]{20,99}\b"),
    _rule(
        "openai-api-key",
        ("T3BlbkFJ",),
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,74}T3BlbkFJ[A-Za-z0-9_-]{20,74}",
    ),
    _rule("anthropic-api-key", ("sk-ant-",), r"\bsk-ant-(?:api03|admin01)-[a-zA-Z0-9_\-]{93}AA\b"),
    _rule("gcp-api-key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}\b"),
    _rule("pypi-upload-token", ("pypi-AgEIcHlwaS5vcmc",), r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
)

_KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(k for r in RULES for k in r.keywords))


def secret_name(name: str) -> bool:
    """True when a file's name alone says it holds credentials (``.env``, ``id_rsa``, ``*.pem``, ...)."""
    if name in SECRET_NAMES or name.lower().endswith(SECRET_SUFFIXES):
        return True
    return name.startswith(".env.") and name not in ENV_TEMPLATES


def find_secret(text: str) -> str | None:
    """The id of the first content rule ``text`` matches, or None. Cheap when no keyword occurs."""
    present = [k for k in _KEYWORDS if k in text]
    if not present:
        return None
    for rule in RULES:
        if any(k in present for k in rule.keywords) and rule.pattern.search(text):
            return rule.id
    return None


class SecretScanner:
    """``find_secret`` over text that arrives in pieces (a streamed read), in bounded memory.

    Pieces are gathered into blocks; each block is scanned together with the tail of the one before,
    so a key block split between two pieces is still seen (blocks of a private key are a few KB).
    """

    BLOCK = 1 << 18
    OVERLAP = 1 << 14

    def __init__(self) -> None:
        self.found: str | None = None
        self._tail = ""
        self._parts: list[str] = []
        self._size = 0

    def feed(self, piece: str) -> None:
        if self.found is not None or not piece:
            return
        self._parts.append(piece)
        self._size += len(piece)
        if self._size >= self.BLOCK:
            self._scan()

    def close(self) -> str | None:
        """Scan what is left; the rule id found anywhere in the pieces, or None."""
        if self.found is None and self._parts:
            self._scan()
        return self.found

    def _scan(self) -> None:
        block = self._tail + "".join(self._parts)
        self._parts, self._size = [], 0
        self.found = find_secret(block)
        self._tail = block[-self.OVERLAP :]
