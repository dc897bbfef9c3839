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
# dotenv files hold credentials (.env, .env.local, .env-prod, .env_local, .env~, prod.env, .envrc of direnv,
# in any case) but for templates: .env.example, .env-sample, .env_template, example.env, ...
ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist", "defaults"})


@dataclass(frozen=True)
class Rule:
    """One content rule: a gitleaks rule id, literal keywords one of which must occur, and the pattern
    (compiled on first use: most processes never meet a keyword, and compiling them all costs ~0.1 s at
    start).

    A two-part rule (``then`` set) matches when ``then`` starts at least ``gap`` characters after a match
    of the pattern ends, however far: a key block's END line is searched for once its BEGIN line is seen.
    Every other pattern has a bounded length, so a streamed scan sees each match whole (``SecretScanner``).
    A ``nocase`` rule's keywords are lower case and searched for in the lowered text; its pattern is
    case-insensitive in ASCII only (``(?ai:...)``), so the lowered text holds a keyword whenever it matches.
    """

    id: str
    keywords: tuple[str, ...]
    source: str
    then: str | None = None
    gap: int = 0
    nocase: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)

    @property
    def closer(self) -> re.Pattern[str]:
        return _compiled(self.then or "")


@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _rule(
    rule_id: str,
    keywords: tuple[str, ...],
    pattern: str,
    then: str | None = None,
    gap: int = 0,
    *,
    nocase: bool = False,
) -> Rule:
    return Rule(rule_id, keywords, pattern, then, gap, nocase)


# Whitespace runs in patterns are bounded ({0,256}, not *), and a pattern that ends in an open-ended run
# keeps only the part that must match (\S{7}, not \S{7,}: the same files match), so that every pattern but
# a two-part rule's has a bounded length (a test checks it).
_GCP_KEY = r'"private_key"\s{0,256}:\s{0,256}"-----BEGIN'

RULES: tuple[Rule, ...] = (
    # gitleaks "private-key": a PEM or OpenSSH private-key block with a body (a bare header in a parser's
    # source is not a key): a BEGIN line, then at least 64 characters on, an END line (a key may be MBs).
    _rule(
        "private-key",
        ("PRIVATE KEY",),
        r"-----BEGIN[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?-----",
        r"KEY(?: BLOCK)?-----",
        64,
    ),
    # a Google service-account key file: gitleaks' "gcp-service-account" looks for the type field; a key is
    # a "private_key" next to a "client_email", in either order, however far apart.
    _rule("gcp-service-account", ('"client_email"',), r'"client_email"', _GCP_KEY),
    _rule("gcp-service-account", ('"private_key"',), _GCP_KEY, r'"client_email"'),
    # .npmrc auth lines (gitleaks "npm-access-token" covers the npm_ token shape below)
    _rule("npmrc-auth-token", ("_authToken",), r"_authToken\s{0,256}=\s{0,256}[^\s$]\S{7}"),
    _rule("npm-access-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),  # real tokens are mixed case
    # gitleaks "aws-access-token" and an AWS secret-key assignment (the 40-character secret after its name,
    # in any case, with _ or - or nothing between its words: gitleaks' older rule took any "aws" name)
    # (gitleaks also lists the rare ABIA/ACCA/A3T prefixes; each keyword costs a pass over every file)
    _rule("aws-access-token", ("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b"),
    _rule(
        "aws-secret-access-key",
        ("secretaccess", "secret_access", "secret-access"),
        r"(?ai:(?:aws[_-]?)?secret[_-]?access[_-]?key)['\"]?\s{0,256}[:=]\s{0,256}['\"]?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
        nocase=True,
    ),
    # gitleaks "github-pat", "github-fine-grained-pat", "github-oauth", "github-app-token", "github-refresh-token"
    _rule("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[0-9a-zA-Z]{36}\b"),
    _rule("github-fine-grained-pat", ("github_pat_",), r"\bgithub_pat_\w{82}\b"),
    _rule("gitlab-pat", ("glpat-",), r"\bglpat-[\w-]{20}\b"),
    _rule("slack-token", ("xox",), r"\bxox[baprs]-[0-9]{10,13}-[0-9]{10,13}"),
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
    _rule("pypi-upload-token", ("pypi-AgEIcHlwaS5vcmc",), r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50}"),
)

_KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(k for r in RULES if not r.nocase for k in r.keywords))
_NOCASE_KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(k for r in RULES if r.nocase for k in r.keywords))


def secret_name(name: str) -> bool:
    """True when a file's name alone says it holds credentials (``.env``, ``id_rsa``, ``*.pem``, ...)."""
    lower = name.lower()
    if name in SECRET_NAMES or lower.endswith(SECRET_SUFFIXES) or lower in (".env", ".envrc"):
        return True
    if lower.startswith(".env") and lower[4:5] in (".", "-", "_", "~"):
        qualifier = lower[5:]  # .env.local, .env-prod, .env_local, .env~
    elif lower.endswith(".env"):
        qualifier = lower[:-4].lstrip(".")  # prod.env
    else:
        return False  # env.py, environment.py, .envs
    return qualifier not in ENV_TEMPLATES


def find_secret(text: str) -> str | None:
    """The id of the first content rule ``text`` matches, or None. Cheap when no keyword occurs."""
    return _Search().block(text, 0, final=True)


class _Search:
    """Rules run over text in one block (``find_secret``) or in overlapping blocks (``SecretScanner``).

    ``block(text, pos, final)``: ``text`` starts with the overlap kept from the block before (none in the
    first), of which ``text[:pos]`` was seen whole before and is only context for ``\\b``. A match that ends
    at the end of a block which is not the last is not taken (one more character could undo a ``\\b`` or
    a lookahead): it lies in the overlap, so the next block decides it. A two-part rule keeps where its
    first part ended, so its second part may come any number of blocks later.
    """

    def __init__(self) -> None:
        self.base = 0  # where the current block starts in the whole text
        self.opened: dict[int, int] = {}  # a two-part rule's index in RULES -> where its first part ended

    def block(self, text: str, pos: int, *, final: bool) -> str | None:
        present = [k for k in _KEYWORDS if k in text]
        if _NOCASE_KEYWORDS:  # one lowered copy serves every case-insensitive rule
            lowered = text.lower()
            present += [k for k in _NOCASE_KEYWORDS if k in lowered]
        if not present and not self.opened:
            return None
        for index, rule in enumerate(RULES):
            if rule.then is None:
                if any(k in present for k in rule.keywords):
                    found = rule.pattern.search(text, pos)
                    if found is not None and (final or found.end() < len(text)):
                        return rule.id
                continue
            opened = self.opened.get(index)
            if opened is None:
                if not any(k in present for k in rule.keywords):
                    continue
                first = rule.pattern.search(text, pos)
                if first is None:
                    continue
                opened = self.opened[index] = self.base + first.end()
            at = max(pos, opened + rule.gap - self.base)
            if at <= len(text) and rule.closer.search(text, at) is not None:
                return rule.id
        return None


class SecretScanner:
    """``find_secret`` over text that arrives in pieces (a streamed read), in bounded memory, with the
    verdict ``find_secret`` gives on the whole text.

    Pieces are gathered into blocks; each block is scanned together with the tail of the one before, which
    holds any match of a bounded pattern that crosses the boundary (they are at most a few hundred
    characters); a two-part rule (a private key's BEGIN ... END) carries its state from block to block.
    """

    BLOCK = 1 << 18
    OVERLAP = 1 << 14

    def __init__(self) -> None:
        self.found: str | None = None
        self._search = _Search()
        self._tail = ""
        self._parts: list[str] = []
        self._size = 0

    def feed(self, piece: str) -> None:
        if self.found is not None or not piece:
            return
        self._parts.append(piece)
        self._size += len(piece)
        if self._size >= self.BLOCK:
            self._scan(final=False)

    def close(self) -> str | None:
        """Scan what is left; the rule id found anywhere in the pieces, or None."""
        if self.found is None:
            self._scan(final=True)
        return self.found

    def open_rule(self) -> str | None:
        """The id of a two-part rule begun and not ended in what was fed (a key block whose END line has not
        come yet), after scanning it all; None once a rule matched."""
        if self.found is None and self._parts:
            self._scan(final=False)
        if self.found is not None or not self._search.opened:
            return None
        return RULES[min(self._search.opened)].id

    def _scan(self, *, final: bool) -> None:
        block = self._tail + "".join(self._parts)
        self._parts, self._size = [], 0
        self.found = self._search.block(block, 1 if self._tail else 0, final=final)
        self._tail = block[-self.OVERLAP :]
        self._search.base += len(block) - len(self._tail)
