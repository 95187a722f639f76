"""A request in conversational words restated as the plain question the reader reads.

Researchers ask as they would ask a colleague: "I'm looking for work on defending LLMs against
jailbreak prompts. Not new attacks, but defenses. What is there?", "Are there benchmarks that
measure …?", "Has anyone explained why DPO misbehaves …?", "I remember an ICLR 2025 paper that …
How did they do it?", "Rather than papers that use X, I want the ones that …", "Under differential
privacy constraints, what methods are there for …?". The reading (rag.text.reading), the question's
shape (rag.text.query) and the premise checks (rag.grounding.evidence) are written for the plain
forms ("Which papers defend LLMs against jailbreak prompts?"); this module turns the first into the
second, by the forms of English requests, not by any topic:

- of several sentences, the request is the first that asks (an opener, a wh-word or a question
  mark) and says something; sentences that only refine it ("Not new attacks, but defenses.") are
  dropped, and one that asks nothing of its own ("How did they do it?") keeps only its question word;
- an opener ("I'm looking for work on", "Show me papers that", "Are there benchmarks that", "Has
  anyone explained why", "I remember a paper that") becomes "Which papers" (or the question word it
  leads to);
- a contrast or a setting put first ("Rather than X, …", "Under X, what …") moves after the request.

A question already in the plain form is returned unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag.text.terms import FRAMING, STOPWORDS, stem, words


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I | re.S)


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'“])")
# "e.g.", "et al.", an initial ("Michael M. Bronstein"): no sentence ends there
_ABBREVIATION_END = re.compile(r"(?:\b(?:e\.g|i\.e|vs|etc|cf|al|approx|fig|eq|no)|(?<![\w.])[A-Z])\.$", re.I)

# The venue, however it is written: "ICLR", "ICLR 2025", "ICLR'25", "ICLR 25"
_VENUE = r"iclr(?:\s*'?(?:20)?25)?"
# "at ICLR 2025", "from this year's ICLR": where every paper here is from, no part of what is asked
_AT_VENUE = rf"(?:(?:at|from|in)\s+(?:this\s+year'?s\s+)?{_VENUE}\s+)?"

# "I want", "we need", "I would like", "I'd like" (no space before "'d")
_WANT = r"(?:(?:i|we)(?:\s+(?:want|need|would\s+like)|'d\s+like))"

_GREETING = re.compile(r"^\s*(?:hi|hello|hey|dear\s+\w+)\b[,!.]?\s*", re.I)
_POLITE = r"(?:please\s+)?"
# What a request names before its content: "papers that", "work on", "a paper that", "the ones which"
_HEAD = (
    rf"(?:(?:an?|the|some|any|all|recent)\s+)?(?:{_VENUE}\s+)?"
    r"(?P<head>papers?|works?|research|studies|study|articles?|ones|those|anything|something)"
    r"(?:\s+(?:that|which|who|where|in\s+which)\b(?:\s+(?:are|is))?|\s+(?:on|about|regarding|into|addressing|tackling)\b)?"
)
# Openers of a request, each ending where its content starts. An imperative without "me" ("List
# Carlini's papers", "Find papers related to …") and "Is there a paper on …" are read as they are.
_OPENERS = re.compile(
    r"^\s*(?:"
    # "I work on recommender systems and want to see what ICLR 2025 has on …"
    r"(?:(?:i|we)\s+(?:work|am\s+working|are\s+working)\s+on\s+[^,.;]+?\s+and\s+)?"
    rf"(?:{_WANT}|want|need|would\s+like)\s+to\s+(?:see|know|find\s+out|learn)\s+what\s+"
    rf"(?:{_VENUE}|the\s+conference|this\s+year|there)\s+(?:has|have|is|offers?)\s+(?:on|about|for|in)\s+|"
    rf"{_POLITE}(?:can|could|would)\s+you\s+{_POLITE}(?:find|show|list|give|recommend|suggest|point)\s+(?:me\s+|us\s+)?(?:to\s+)?"
    rf"|{_POLITE}(?:show|find|give|recommend|suggest)\s+(?:me|us)\s+"
    r"|(?:(?:i'?m|i\s+am|we'?re|we\s+are)\s+)?(?:looking|searching|hunting)\s+for\s+"
    r"|(?:i'?m|i\s+am|we'?re|we\s+are)\s+trying\s+to\s+(?:find|understand|learn\s+about)\s+"
    rf"|is\s+there\s+(?:any\s+)?(?:{_VENUE}\s+)?(?=(?:work|research|literature)\b)"
    r"|(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:after|interested\s+in)\s+"
    rf"|{_WANT}\s+to\s+(?:know|understand|learn|see)\s+(?=(?:how|why|what|whether|which)\b)"
    # "I'd like to catch up on X", "I want to read about X"; not "I want to build …"
    rf"|(?:{_WANT}|i\s+am\s+looking\s+for)\s+(?:to\s+(?:find|see|read(?:\s+(?:up\s+)?(?:about|on))?|know\s+(?:about|of)|"
    r"catch\s+up\s+(?:on|with)|learn\s+about|get\s+up\s+to\s+speed\s+on)\s+|(?!to\b))"
    r"|do\s+you\s+know\s+(?:of\s+)?(?:any\s+)?"
    # "What did ICLR 2025 say about X?", "What do people have on X?" (not what papers find: a finding)
    rf"|what\s+(?:did|does|do|has|have)\s+(?:{_VENUE}|the\s+conference|(?:recent\s+)?papers|people|researchers|anyone)\s+"
    r"(?:say|said|have|had|offer|offered)\s+(?:about|on)\s+"
    r"|are\s+there\s+(?:any\s+)?(?=[\w-]+s\s+(?:that|which)\b)"
    r")",
    re.I,
)
# "I remember a paper that compressed X": which paper compressed X
_RECALLED = _rx(
    rf"^\s*(?:i|we)\s+(?:remember|recall|once\s+read|read|heard|saw)\s+(?:about\s+|of\s+|that\s+)?{_HEAD}\s+(?P<claim>.+)$",
)
# "I remember a text-to-music paper at ICLR 2025 that generated songs": which text-to-music paper generated them
_RECALLED_KIND = _rx(
    r"^\s*(?:i|we)\s+(?:remember|recall|once\s+read|read|heard|saw)\s+(?:about\s+|of\s+)?(?:an?|the|one|some)\s+"
    rf"(?:{_VENUE}\s+)?(?P<kind>(?:(?!iclr\b|paper\b)[\w-]+\s+){{1,3}}?)(?:{_VENUE}\s+)?(?P<head>paper|work|study|article)\s+"
    # ("… an ICLR 2025 pretraining study concluding that X": which pretraining paper shows that X)
    rf"{_AT_VENUE}(?P<on>that|which|where|about|on|(?:showing|concluding|finding|claiming|arguing|reporting|demonstrating|"
    r"proving)\s+that)\s+(?P<claim>.+)$",
)
# "I read that an ICLR 2025 benchmark of forecasting questions found frontier LLMs beat superforecasters": which
# paper of that kind shows the claim (what is recalled is what it found, not the thing's name)
_RECALLED_FINDING = _rx(
    r"^\s*(?:i|we)\s+(?:remember|recall|once\s+read|read|heard|saw)\s+(?:that\s+)?(?:an?|the|one|some)\s+"
    rf"(?:{_VENUE}\s+)?(?:(?P<kind>[^,;:]{{3,80}}?)\s+(?:found|showed|reported|concluded|claimed|demonstrated|proved|"
    r"established|argued|finding|showing|reporting|concluding|claiming|demonstrating|proving|arguing)\s+(?:that\s+)?"
    r"|(?:result|finding|claim)\s+that\s+)(?P<claim>[^,;:].+)$",
)
# "Which paper was that?", "Which one is it, and how big was the margin?": the paper the sentence before recalls
_WHICH_WAS_IT = _rx(r"^\s*(?:which|what)\s+(?:paper|one|work|study|article)\s+(?:was|is)\s+(?:that|it|this)\b")
# "Has anyone explained why …", "Have any papers shown how …", "Did anyone (at ICLR 2025) propose …";
# and wondered: "I'm working on X and wondering whether anyone at ICLR looked at Y", "I'm curious who is
# using Y" (the asker's own work is not the question)
_ANYONE_SUBJECT = r"(?:anyone|anybody|anything|any\s+(?:papers?|works?|studies|research))"
_ANYONE = _rx(
    rf"^\s*(?:(?:has|have|did|does)\s+{_ANYONE_SUBJECT}\s+|"
    # "Anyone using successor features …?", "Who's backpropagating through discrete operations?"
    r"(?:(?:is|are)\s+)?(?:anyone|anybody)\s+(?:still\s+)?(?=[a-z]+ing\b)|who(?:'s|\s+is|\s+are)\s+(?:still\s+)?(?=[a-z]+ing\b)|"
    r"(?:(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:(?:working\s+on\s+(?P<own>[^,.;]+?)|an?\s+[^,.;]+?),?\s+and\s+(?:i\s+)?)?|(?:i|we)\s+)?"
    rf"(?:wondering|wonder|curious)\s+(?:whether|if|who|what)\s+(?:{_ANYONE_SUBJECT}\s+|people\s+|researchers\s+)?)"
    rf"{_AT_VENUE}(?:(?:has|have|is|are)\s+)?(?P<verb>(?!about\b)[a-z]+)\s+(?P<rest>.*)$",
)
_IT = _rx(r"\b(for|on|to|in|with)\s+(?:it|this|that)\b")  # what the asker works on, pointed back at
_WH = re.compile(r"^\s*(?:why|how|what|whether|which|who|when|where)\b", re.I)
# "Rather than papers that use X, I want …": a contrast put first ends at its comma ("Not yet another
# method for X: I want …" too; not "Not all …")
_LEADING_CONTRAST = _rx(
    r"^\s*(?P<contrast>(?:rather\s+than|instead\s+of|as\s+opposed\s+to|unlike|other\s+than|"
    r"not(?!\s+(?:all|every|sure|certain|only|just|much|many)\b))\b"
    # (to the comma before the request when the contrast has commas of its own: "Rather than always paying for the
    # slow, deliberate path (explicit search, full reasoning traces), which papers …")
    r"(?:.+?(?=[,;:]\s*(?:which|what|how|who|why|where|i|we|are|is|do|does|has|have|can|could|any)\b)|[^,;:]+))"
    r"[,;:]\s*(?P<rest>.+)$",
)
# "Defenses rather than attacks: which papers make RL agents hold up …": a contrast as a heading
_HEADING_CONTRAST = _rx(
    r"^\s*(?P<head>[^:?;]{1,60}?\b(?:rather\s+than|instead\s+of|as\s+opposed\s+to|not)\b[^:?;]{1,60}?)\s*:\s*"
    r"(?P<rest>(?:which|what|how|who)\b.+)$")
# "Under differential privacy constraints, what methods …", "In GSM-Symbolic, how are …"
_LEADING_SETTING = _rx(
    r"^\s*(?P<setting>(?:under|in|for|with|without|within|on|at|during|beyond|when|whenever)\s+[^,;:?]{2,80}?)\s*,\s*"
    r"(?P<rest>(?:what|which|how|why|who)\b.+)$",
)
# "What work targets X", "What time-series work builds on X": which (time-series) papers …
_WHAT_WORK = re.compile(
    r"^\s*what\s+(?:(?P<kind>(?!papers?\b|works?\b|is\b|are\b)[\w-]+)\s+)?(?:work|research)\s+(?!is\b|are\b|exists?\b|on\b)", re.I)
# "Papers on X" as a heading
_HEADING = re.compile(r"^\s*(?:(?:papers|works|research|studies)\s+(?:on|about|regarding|where|in\s+which|whose)"
                      r"|(?:(?:have\s+you\s+|you\s+)?got|(?:is|was)\s+there|(?:are|were)\s+there)\s+anything\s+"
                      rf"{_AT_VENUE}(?:on|about|regarding))\s+", re.I)


def _sentences(text: str) -> list[str]:
    parts: list[str] = []
    for piece in _SENTENCE_END.split(text.strip()):
        # (an apostrophe inside a word opens no quote: "In 'Don't flatten, tokenize! …', why …")
        quoted = parts and (len(re.findall(r"[\"“”]", parts[-1])) % 2 == 1
                            or re.search(r"(?:^|\s)'[^']*$", re.sub(r"(?<=\w)'(?=\w)", "", parts[-1])))
        if parts and (quoted or _ABBREVIATION_END.search(parts[-1])):
            parts[-1] += " " + piece  # "e.g. The …" does not end a sentence
        else:
            parts.append(piece)
    return [p.strip() for p in parts if p.strip()]


def _lower_first(text: str) -> str:
    """"Rather than X" moved inside a sentence: "rather than X" (a name keeps its capitals)."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first[1:] == first[1:].lower() else text


def _says_something(sentence: str) -> bool:
    """A word beyond question words and framing ("What is there?", "How did they do it?" say nothing)."""
    return any(w not in STOPWORDS and w not in FRAMING for w in words(sentence))


# What a request names only by pointing back at the sentences before it ("these practical problems", "this
# situation"), and what it asks of papers beyond finding them ("What should I read?", "Which ones should I
# look at?"): neither says what the papers are about
_POINTER = _rx(
    # "work that helps with either problem", "papers that fit this situation", "… are relevant to my case"
    r"\b(?:(?:helps?|helping|solves?|solving|fix|fixes|fixing|fits?|fitting|match(?:es)?|suits?|appl(?:y|ies)\s+to|"
    r"(?:are|is|be)\s+(?:most\s+)?(?:relevant|useful|applicable)\s+(?:to|for|in)|relates?\s+to|speaks?\s+to)\s+(?:with\s+)?)?"
    r"(?:these|those|this|that|such|my|our|either|both|each|the\s+two)\s+(?:[\w-]+\s+){0,2}?(?:problems?|issues?|challenges?|questions?|"
    r"needs?|concerns?|limitations?|difficulties|situations?|scenarios?|use\s+cases?|pain\s+points?|settings?|setups?|cases?|"
    r"constraints|requirements)\b"
    r"|\b(?:should|could|would|can|do|must|to)\s+(?:i|we|one)?\s*(?:read|look\s+(?:at|into)|check(?:\s+out)?|cite|"
    r"consult|start\s+with)\b|\b(?:to|worth)\s+(?:reading|read|looking\s+at|checking)\b"
    # "Which ICLR 2025 papers are relevant?" after the story: relevant to it (read alone, "relevant" was the topic)
    r"|\b(?:are|is|be)\s+(?:most\s+|particularly\s+|especially\s+)?(?:relevant|useful|helpful|applicable)"
    r"(?:\s+(?:here|for\s+(?:us|me)|to\s+(?:us|me)))?\s*[?.!]*\s*$"
    rf"|{_VENUE}"
)


_THAT_SETTING = _rx(r"\b(?:in|for|under|within)\s+(?P<that>(?:that|this|such\s+an?|the\s+same)\s+(?:[\w-]+\s+)?"
                    r"(?:setting|scenario|regime|situation|loop|case))\b")
_THAT_KIND = _rx(r"\b(?:that|this|the\s+same|such\s+an?)\s+(?:kind|sort|type)\s+of\s+(?P<n>[\w-]+)\b")


def _kind_named(request: str, before: list[str]) -> str:
    """The request with "that kind of N" replaced by the kind of N the sentences before it name ("label shift"
    for "that kind of shift" after "Label shift only: the class proportions … differ …"), and "in that (…)
    setting" by the setting the question's heading names; as it is when none does."""
    m = _THAT_KIND.search(request)
    setting = _THAT_SETTING.search(request)
    # (a heading is a noun phrase of a few words, not the asker's sentence: "We serve an internal LLM where …:")
    heading = next((h.group(1) for h in [re.match(r"^([^:]{3,80}):\s", before[0])] if h), "") if before else ""
    if setting and heading and _says_something(heading) and len(heading.split()) <= 8 and not re.match(
            r"(?i)(?:i|we|our|my|you|they|it|this|there)\b", heading):
        # "Code generation as a multi-turn loop: … Which papers study LLMs in that interactive setting?": the
        # setting the question's heading names
        return f"{request[: setting.start('that')]}{_lower_first(heading.strip())}{request[setting.end():]}"
    if not m:
        return request
    noun = m.group("n")
    for sentence in reversed(before):
        for k in re.finditer(rf"\b((?:[\w-]+\s+){{1,2}}){re.escape(noun)}\b", sentence, re.I):
            mods = [w for w in k.group(1).split() if w.lower() not in STOPWORDS and w.lower() not in FRAMING]
            if mods and k.group(1).split()[-1] == mods[-1]:  # (the word just before the noun is its kind)
                return f"{request[: m.start()]}{mods[-1].lower()} {noun}{request[m.end():]}"
    return request


def _requests_something(sentence: str) -> bool:
    """Says something beyond what it points back at and what it asks done with the papers ("Which ICLR 2025
    papers address these practical problems?" and "What should I read?" say nothing: the sentences before
    them do)."""
    return _says_something(_POINTER.sub(" ", _ASIDE_LEAD.sub("", sentence)))


def _requests(text: str) -> bool:
    """Opens with a request in the first person or a question word, and asks it."""
    return bool(_OPENERS.match(text) or _ANYONE.match(text) or _recalls(text) or _HEADING.match(text)
                or (_WH.match(text) and text.rstrip().endswith("?")))


def _recalls(text: str) -> bool:
    """Recalls a paper by what it did or found ("I remember a paper that …", "I read that a benchmark found …")."""
    return bool(_RECALLED.match(text) or _RECALLED_KIND.match(text) or _RECALLED_FINDING.match(text))


def _asks(sentence: str) -> bool:
    m = _LEADING_CONTRAST.match(sentence)
    if m:  # "Rather than X, I want …" asks what follows the contrast ("Instead of X, which is …" does not)
        return _requests(m.group("rest"))
    return (_requests(sentence) or (bool(_WH.match(sentence)) and not _SUBORDINATE.match(sentence))
            or sentence.rstrip().endswith("?"))


# "When the clause sits near the start it does fine, but …." states a case; it asks nothing (it was taken for the
# question of a request whose question came after it)
_SUBORDINATE = _rx(r"^\s*(?:when|where|whenever|wherever)\b[^?]*,[^?]*$")


def _refines(sentence: str) -> bool:
    """A sentence that narrows the request before it: "Not new attacks, but defenses." (not a request
    its contrast opens: "Not yet another method for X: I want papers that …")"""
    m = _LEADING_CONTRAST.match(sentence)
    if m and _requests(m.group("rest")):
        return False
    return bool(re.match(r"^\s*(?:not|but|no|ideally|preferably|especially|only|i'?m\s+not|i\s+am\s+not|"
                         r"i\s+don'?t|excluding|except)\b", sentence, re.I))


def _opened(sentence: str) -> str:
    """The sentence with its opener turned into "Which papers …" (or the question word it leads to)."""
    m = _ANYONE.match(sentence)
    if m:
        rest = m.group("rest")
        if _WH.match(rest):  # "Has anyone explained why DPO misbehaves": why DPO misbehaves
            return rest[0].upper() + rest[1:]
        if m.group("own"):  # "I'm working on protein structure and wonder whether anyone used flow matching for it"
            rest = _IT.sub(lambda i: f"{i.group(1)} {m.group('own').strip()}", rest, count=1)
        verb = m.group("verb")
        verb = {"done": "do", "did": "do", "made": "make"}.get(verb.lower(), verb)  # "Has anyone done X": which papers do X
        return f"Which papers {'are ' if verb.endswith('ing') else ''}{verb} {rest}"
    m = _RECALLED.match(sentence)
    if m and m.group("head").lower() in ("paper", "work", "study", "article"):
        # "a paper showing that X": which paper shows that X (a claim an abstract states or not)
        # ("I read that a paper found X": a paper found that X)
        shown = re.match(r"(?:showing|demonstrating|proving|finding|reporting|claiming|concluding|arguing|showed|"
                         r"demonstrated|proved|found|reported|claimed|concluded|argued)\s+(?:that\s+)?(?P<x>.+)$",
                         m.group("claim"), re.I | re.S)
        if shown:
            return f"Which paper shows that {shown.group('x')}"
        # "I recall a paper on federated recommendation, where …": which paper on it
        about = re.search(r"\s(?:on|about|regarding|into)\s*$", sentence[: m.start("claim")], re.I)
        return f"Which paper {about.group(0).strip().lower() + ' ' if about else ''}{m.group('claim')}"
    m = _RECALLED_KIND.match(sentence)
    if m:
        on = m.group("on").lower()
        verb = "studies " if on in ("about", "on") else "shows that " if on.endswith(" that") else ""
        return f"Which {m.group('kind')}paper {verb}{m.group('claim')}"
    m = _RECALLED_FINDING.match(sentence)
    if m:
        return f"Which {m.group('kind') + ' ' if m.group('kind') else ''}paper shows that {m.group('claim')}"
    m = _OPENERS.match(sentence)
    if not m:
        return sentence
    rest = sentence[m.end():]
    if re.search(r"\b(?:has|have|is|offers?)\s+(?:on|about|for|in)\s+$", m.group(0), re.I):  # "what ICLR has on X"
        return f"Which papers study {rest}"
    if _WH.match(rest):  # "I want to know how …"
        return rest[0].upper() + rest[1:]
    head = re.match(rf"{_HEAD}\s*", rest, re.I)
    if head:
        one = head.group("head").lower() in ("paper", "work", "study", "article")
        single = one and re.match(r"(?:an?|the)\s", rest, re.I) is not None
        # "work on X": which papers study X ("which papers X" says nothing they do)
        study = "study " if re.search(r"\b(?:on|about|regarding|into)\s*$", head.group(0), re.I) else ""
        return ("Which paper " if single else "Which papers ") + study + rest[head.end():]
    if re.search(r"\b(?:on|about|with)\s+$", m.group(0), re.I):  # "I'd like to catch up on X", "learn about X"
        return f"Which papers study {rest}"
    # "Looking for continual learning papers that build on …": which continual learning papers build on …
    kind = re.match(r"(?P<kind>(?:[\w-]+\s+){1,3}?)(?:papers|works|studies)\s+(?:that|which)\s+(?P<rest>.+)$", rest, re.I | re.S)
    if kind and not re.match(r"(?:an?|the|some|any|all|recent)\s", rest, re.I):
        return f"Which {kind.group('kind')}papers {kind.group('rest')}"
    # "Are there benchmarks that measure …": which benchmarks measure …
    noun = re.match(r"(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+(?:that|which)\s+(?P<rest>.+)$", rest, re.I | re.S)
    if noun:
        return f"Which {noun.group('noun')} {noun.group('rest')}"
    return rest[0].upper() + rest[1:] if rest else sentence  # "Show me Carlini's papers": a heading


# A sentence beside the request that sets something aside: "Not papers that only introduce a benchmark,
# though.", "I'm not interested in general LLM personalization.", "Simulators and benchmarks aren't what I
# need." What it sets aside follows the request as "…, not X" (what `Reading.aside` and the contrast rules read).
_SETS_ASIDE = (
    _rx(r"^\s*(?:but\s+)?not\s+(?P<x>.+)$"),
    _rx(r"^\s*(?:i'?m|i\s+am|we'?re|we\s+are)\s+not\s+(?:interested\s+in|looking\s+for|after)\s+(?P<x>.+)$"),
    _rx(r"^\s*(?:i|we)\s+(?:don'?t|do\s+not)\s+(?:need|want|care\s+about)\s+(?P<x>.+)$"),
    # ("… are the opposite of what I need")
    _rx(r"^\s*(?P<x>.+?)\s+(?:aren'?t|are\s+not|isn'?t|is\s+not|(?:are|is)\s+the\s+opposite\s+of)\s+what\s+(?:i|we)(?:\s+am|'m|\s+are|'re)?\s+"
        r"(?:need|want|mean|after|looking\s+for|asking\s+(?:about|for)|interested\s+in)\b.*$"),
    # "Scoring networks against fMRI doesn't interest me much."
    _rx(r"^\s*(?P<x>.+?)\s+(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+interest\s+(?:me|us)\b.*$"),
    # "LLM alignment framed as a two-player game doesn't count."
    _rx(r"^\s*(?P<x>.+?)\s+(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+count\b.*$"),
    # "Molecules, proteins and crystals are out of scope for me.", "Medical imaging is not relevant here."
    _rx(r"^\s*(?P<x>.+?)\s+(?:are|is)\s+(?:out\s+of\s+scope|out|off[-\s]topic|off\s+the\s+table|not\s+(?:relevant|needed|wanted|of\s+interest))"
        r"(?:\s+(?:for|to)\s+(?:me|us|my\s+\w+|our\s+\w+))?(?:\s+here)?\W*$"),
    # "Skip the weather-forecasting papers.", "I've already been through X, so skip those.", "No X, please."
    _rx(r"^\s*(?:please\s+)?(?:skip|ignore|leave\s+out|exclude)\s+(?P<x>.+)$"),
    _rx(r"^\s*(?:i'?ve|i\s+have|we'?ve|we\s+have)\s+already\s+(?:been\s+through|gone\s+through|went\s+through|read|seen|covered|reviewed|looked\s+at)\s+"
        r"(?P<x>.+?)(?:,?\s+so\b.*)?$"),
    _rx(r"^\s*no\s+(?P<x>.+?),?\s+please\W*$"),
    # "I already know the LLM pretraining data-selection work."
    _rx(r"^\s*(?:i|we)\s+already\s+know(?:\s+about|\s+of)?\s+(?P<x>.+?)(?:,?\s+so\b.*)?$"),
    # "Plasticity-loss fixes aside, what is there?", "Apart from diffusion models, anything?" (`_ASIDE_LEAD`)
    _rx(r"^\s*(?:(?:setting|leaving|putting)\s+)?(?P<x>[^,]+?)\s+aside\s*,.*$"),
    _rx(r"^\s*(?:apart\s+from|aside\s+from|besides|other\s+than|except\s+for)\s+(?P<x>[^,]+?)\s*,.*$"),
)
# ... whose request is what follows the comma
_ASIDE_LEAD = _rx(r"^\s*(?:(?:(?:setting|leaving|putting)\s+)?[^,]+?\s+aside|(?:apart\s+from|aside\s+from|besides|other\s+than|"
                  r"except\s+for)\s+[^,]+?)\s*,\s*")


_ALSO_SKIP = _rx(r"\b(?:please\s+)?(?:skip|ignore|leave\s+out|exclude)\s+")


# "Vision/classification preferred.", "Ideally open-source.": a preference, no demand
_PREFERENCE = _rx(r"^\s*(?:(?:[\w/-]+\s+){0,4}(?:is\s+|are\s+)?preferred|ideally\b|preferably\b|bonus\s+if\b)")


def _set_aside(sentence: str) -> str:
    """What a sentence sets aside ("papers that only introduce a benchmark"), or ""."""
    for pattern in _SETS_ASIDE:
        m = pattern.match(sentence)
        if m:
            x = re.split(r",\s*but\b|;|,\s*though\b|\s+though\b", m.group("x"), maxsplit=1)[0]
            # "… isn't what I'm after, nor RLHF for chatbots": both
            nor = re.search(r"(?:,\s*|\s+)nor\s+(?P<y>[^.;!?]+)", sentence[m.end("x"):], re.I)
            x = f"{x} or {nor.group('y').strip()}" if nor else x
            x = re.sub(r"\s+", " ", _ALSO_SKIP.sub(" ", x))  # "Not LLM interpretability, and please skip Shapley-value papers."

            return _lower_first(x.strip(" .!?,")) if words(x) else ""
    return ""


# "I'm working on X and want to build on Y. Which papers do this?": which papers on X build on Y
_DOES_THIS = _rx(r"^\s*(?:which|what|any)\s+(?:papers|works|ones|studies)\s+(?:do|does|did|have\s+done)\s+(?:this|that|so|it)\s*\??\s*$")
_WORKING_ON = _rx(
    r"^\s*(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:working\s+on|building|developing|studying)\s+(?P<x>[^,.;]+?)\s+and\s+"
    rf"(?:{_WANT}|(?:(?:i|we)\s+)?(?:want|need|would\s+like|plan|hope))\s+to\s+(?P<v>.+)$",
)


# "3D point-cloud segmentation with few labels (…). Which papers handle that setting?": the request
# points back at the sentence before it, which names the topic
_POINTS_BACK = _rx(
    r"^\s*(?:which|what|any)\s+(?:papers|works|ones|studies)\s+(?P<v>[a-z]+)\s+(?:that|this|these|such)"
    r"(?:\s+(?:setting|problem|task|topic|scenario|case|question|area|direction|line\s+of\s+work)s?)?"
    # "…, rather than multi-epoch task-by-task training?": the contrast stays
    r"(?P<tail>\s*,?\s*(?:rather\s+than|instead\s+of|as\s+opposed\s+to|not)\b[^?]*)?\s*\??\s*$")


# "I'm working with face images: A, B and C. Did ICLR 2025 have anything along those lines?": the
# request asks for papers on what the sentences before it name
_ALONG_THOSE = _rx(
    rf"^.*\b(?:anything|any\s+(?:papers?|work|studies|research)|(?:{_VENUE}\s+)?(?:papers?|work|studies|research))\s+"
    rf"{_AT_VENUE}"
    r"(?:along\s+(?:those|these|the\s+same)\s+lines|like\s+(?:that|this|those|these|it)|of\s+(?:that|this|the\s+sort|the\s+kind)"
    r"(?:\s+(?:sort|kind))?|on\s+(?:that|this|these|those|it)(?:\s+(?:front|topic|area|problem|setting))?)"
    rf"(?:\s+(?:at|from|in)\s+{_VENUE})?"  # "Was there anything like that at ICLR 2025?"
    # "… work on this, e.g. Koopman-based models or metriplectic networks?": the examples stay
    r"(?P<tail>\s*,?\s*(?:e\.\s?g\.?|such\s+as|for\s+example|for\s+instance|like|say)\b[^?]*)?\s*\??\s*$")
_FIRST_PERSON = _rx(r"^\s*(?:(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:working|looking|interested)\s+(?:with|on|in|at)\s+"
                    r"|(?:i|we)\s+(?:work|study|research)\s+(?:with|on)\s+"
                    rf"|{_WANT}\s+(?!to\b))")
# "I'm a computational neuroscientist.": who asks, no part of what is asked
_IDENTITY = _rx(r"^\s*(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:an?\s+)?[\w\s-]{1,60}?(?:ist|er|or|ian|ent|ers|ists)\s*[.!]?\s*$")
_WANTS_TO = _rx(r"^\s*(?:i'?m|i\s+am|we'?re|we\s+are|i|we)\b.*?\b(?:would\s+like|'d\s+like|want|need|hope|plan)\s+to\s+"
               r"(?P<v>[^.!?]+?)[.!]?\s*$")
# "Papers built on X.", "Work that does Y." opening a request
_PAPERS_HEADING = _rx(r"^\s*(?:papers|works?|research|studies)\s+(?:that|which|where|whose|on|about|built|using|based|with)\b")
# a clause of the asker's own before the sentence's main clause ("Before I trust that, …", "If we adopt it, …")
_OWN_LEAD = _rx(r"^\s*(?:before|if|since|because|as|until|while|so\s+that)\s+(?:i|we)\b[^,.;]{0,80},\s*(?P<rest>\S.*)$")
_FOR_PAPERS = _rx(r"\b(?:papers|works?|studies|research)\s+(?:that|which|on|about|where|whose|built\s+on|using|based\s+on)\b")


def _along_those(sentences: list[str]) -> str:
    """"… Did ICLR 2025 have anything along those lines?" asks of what the sentences before it name."""
    for k, sentence in enumerate(sentences):
        m = _ALONG_THOSE.match(sentence)
        if k == 0 or not m:
            continue
        before = [b for b in sentences[:k] if _says_something(b) and not _set_aside(b) and not _IDENTITY.match(b)]
        if not before or any(_asks(b) for b in before):
            return ""
        # "I'm a control engineer with … and would like to learn a model of its dynamics": what the asker wants to do
        wants = [w.group("v") for b in before for w in [_WANTS_TO.search(b)] if w]
        named = " ".join(wants) if wants else " ".join(_FIRST_PERSON.sub("", b.strip().rstrip(".!")) for b in before)
        tail = (m.group("tail") or "").strip().lstrip(",").strip()
        return f"Which papers study {_lower_first(named)}{', ' + tail if tail else ''}?"
    return ""


def _points_back(sentences: list[str]) -> str:
    """"Which papers handle that setting?" asks of the topic the sentence before it names."""
    along = _along_those(sentences)
    if along:
        return along
    for k, sentence in enumerate(sentences):
        m = _POINTS_BACK.match(sentence)
        if m and k > 0 and m.group("v").lower() not in ("do", "does", "did", "have"):
            before = sentences[k - 1].strip().rstrip(".!")
            if before and not _asks(before):
                tail = (m.group("tail") or "").strip().lstrip(",").strip()
                return f"Which papers {m.group('v').lower()} {_lower_first(before)}{', ' + tail if tail else ''}?"
        side = _SIDE_OF.match(sentence)
        if side and k > 0:
            # "Generating 4D scenes as opposed to reconstructing them. Which papers work on the generation
            # side?": the side is one of the two the sentence before names, in its words
            before = sentences[k - 1].strip().rstrip(".!")
            if before and not _asks(before) and stem(side.group("side").lower()) in {stem(w) for w in words(before)}:
                return f"Which papers work on {_lower_first(before)}?"
    return ""


# "Which papers work on the generation side?", "… take the defence side?"
_SIDE_OF = _rx(r"^\s*(?:which|what|any)\s+(?:papers|works|ones|studies)\s+(?:work\s+on|are\s+on|focus\s+on|take|do)\s+"
               r"the\s+(?P<side>[\w-]+)\s+(?:side|part|half|end)\s*\??\s*$")


# A request about the paper a sentence before it describes ("the authors", "this paper")
_REFERS_BACK = _rx(r"\b(?:the|these|those|its|their)\s+authors\b|\b(?:this|that|the\s+same)\s+(?:paper|work|study|analysis|article)\b")
# ... and a sentence that opens on one paper ("The ICLR 2025 patch-level training paper says …"), then a question
# of it ("What patch size gives them that 10x saving?")
_ONE_PAPER_SAYS = _rx(r"^\s*(?:in\s+)?the\s+(?:[\w-]+\s+){0,6}?(?:paper|study|analysis|article)\b")
_OF_IT = _rx(r"\b(?:they|them|their|it|its)\b")


def _does_this(sentences: list[str]) -> str:
    """The request "Which papers do this?" asks of the sentence before it that says what the asker does."""
    for k, sentence in enumerate(sentences):
        if _DOES_THIS.match(sentence):
            for before in reversed(sentences[:k]):
                m = _WORKING_ON.match(before)
                if m:
                    v = m.group("v").rstrip(" .!")
                    head, _, rest = v.partition(",")
                    return f"Which papers on {m.group('x').strip()} {head.strip()}{',' + rest if rest else ''}?"
    return ""


# "this year" is the venue's: no word of the topic ("Where does self-distillation show up this year?")
_THIS_YEAR = _rx(rf"(?:,?\s+(?:at\s+{_VENUE}\s+)?this\s+year\b(?!'s)|\bthis\s+year'?s\s+)")
# "Where does self-distillation show up, with …?": which papers use self-distillation, with … ("Where does
# the attention sink appear?" asks where, and stays)
_WHERE_SHOWS = _rx(r"^\s*where\s+(?:does|do|did|has|have)\s+(?P<x>.+?)\s+(?:show(?:n)?\s+up|come\s+up|turn(?:ed)?\s+up|get\s+used|been\s+used)\b\s*")
# "Papers where a classic evolutionary method does the heavy lifting": papers built on it (an idiom, no topic)
# ("papers where an explicit kernel is a core ingredient", "… where GPs play a central role": built on them)
_HEAVY_LIFTING = _rx(r"\b(?:where|in\s+which)\s+(?P<x>.+?)\s+(?:(?:does|do|did|is\s+doing|are\s+doing)\s+(?:the|most\s+of\s+the)\s+heavy\s+lifting"
                     r"|(?:is|are)\s+(?:an?|the)\s+(?:core|central|key|main|essential)\s+(?:ingredients?|components?|parts?|building\s+blocks?)"
                     r"|plays?\s+(?:an?|the)\s+(?:core|central|key|main|essential)\s+role)\b")
# "Quantization papers that aren't about transformer LLMs: …": quantization papers, …, not transformer LLMs;
# "unlearning for models that are NOT large language models: …": unlearning for models, …, not large language models
_NOT_ABOUT = _rx(r"\b(?P<kind>papers|works?|methods|ones|studies|models|networks|systems)\s+(?:that|which)\s+"
                 # (not "methods that are not built on diffusion priors": that is read as "without" them)
                 r"(?:aren'?t|are\s+not|isn'?t|is\s+not)\s+(?:about\s+|on\s+|for\s+|(?!(?:built|made|[a-z]+(?:ed|en|ing))\b))(?P<x>[^:;,.?!()]+)"
                 # "Speech papers that are neither speech recognition nor text-to-speech, and not spoken-dialogue LLMs either"
                 r"|\b(?P<kind2>papers|works?|methods|ones|studies)\s+(?:that|which)\s+are\s+neither\s+(?P<neither>[^:;.?!()]+)"
                 # a heading of any kind: "GNN theory that isn't about WL-style expressive power: …", "Parameter-efficient
                 # fine-tuning that is NOT a low-rank (LoRA-style) update: …"
                 r"|^\s*(?P<kind3>(?:[\w/-]+\s+){0,4}[\w/-]+)\s+(?:that|which)\s+(?:aren'?t|are\s+not|isn'?t|is\s+not)\s+"
                 r"(?:about\s+|on\s+|for\s+|(?!(?:built|made|[a-z]+(?:ed|en|ing))\b))(?P<x3>[^:;.?!]+?)(?=\s*[:;.?!])")
# "how do people get models to abstain": how do models abstain (who does it is no part of the topic)
_PEOPLE_GET = _rx(r"\b(?P<wh>how|why)\s+(?:(?:do|does|did|can|could|should|would)\s+)?(?:people|researchers|folks|others|one|you|we)\s+"
                  r"(?:get|make|teach|train|help)\s+(?P<x>(?:[\w-]+\s+){0,3}?[\w-]+)\s+to\s+(?=[a-z])")
# "Kind of the reverse of the over-refusal papers: how do …?": the question, not what it reverses
_REVERSE_HEADING = _rx(r"^\s*(?:(?:kind|sort)\s+of\s+|somewhat\s+)?(?:the\s+)?(?:(?:reverse|opposite|converse|flip\s+side)\s+of|"
                       r"other\s+way\s+a?round\s+(?:from|to))\s+"
                       r"(?P<x>[^:?;]{1,60}?)\s*:\s*(?P<rest>.+)$")
# "Think Gumbel-softmax, straight-through or surrogate gradients.": examples of what the request asks for
_EXAMPLES_SENTENCE = _rx(r"^\s*(?:think(?:\s+of)?|things\s+like|e\.\s?g\.?,?|for\s+example,?|for\s+instance,?|such\s+as|say,?|"
                         # "I mean learning from unpaired thumbs-up or thumbs-down, scalar ratings or ties."
                         r"i\s+mean(?:\s+things\s+like)?,?)\s+(?P<x>.+?)[.!]?\s*$")
# "…; methods, privacy attacks and backdoor defenses all count, but plain FedAvg on images does not"
_COUNTS_BUT = _rx(r"\b(?:all\s+|also\s+)?counts?,?\s+but\s+(?P<x>[^;]+?)\s+(?:does|do)(?:\s+not|n'?t)(?:\s+count)?(?P<end>\s*[.!?]?\s*)$")


# "when you don't have clean preference pairs", "if there are no labels": without them (the setting
# read as "when clean preference pairs" asked for the pairs)
_LACKING = _rx(r"\b(?:when|if)\s+(?:there\s+(?:is|are)\s+no\s+|(?:you|we|one|they|i)\s+(?:(?:don'?t|do\s+not|can'?t|cannot)"
               r"\s+(?:have|get)\s+(?:access\s+to\s+|any\s+)?|(?:have|has)\s+no\s+(?:access\s+to\s+)?|lack\s+))")


# "causal machinery as a lens on LLMs": used to study them
_LENS = _rx(r"\bas\s+an?\s+(?:lens|window)\s+(?:on|onto|into)\b")
# A role said of any technique a paper uses: "use Mamba as the backbone for …" uses Mamba for … (a paper
# names the model it is built on, seldom its role); "runs an SVD … as a central step" runs one
_AS_A_ROLE = _rx(r"\s+as\s+(?:the|a|an|their|its)\s+(?:backbones?|building\s+blocks?|(?:central|core|key|main|first)\s+"
                   r"(?:steps?|parts?|components?|ingredients?)(?:\s+of\s+(?:their|its|the|a)\s+(?:methods?|approach(?:es)?|pipelines?|work)\b)?)\b")
# "Who runs an SVD on …?": who uses one
_WHO_RUNS = _rx(r"^\s*who(?:'s|\s+is)?\s+(?:runs?|running)\s+")
# How well or from where, said of any paper: "attack LLM agents from the outside", "pruned with barely
# any loss" (read as a setting "outside" and a technique "barely loss")
_SAID_OF_ANY = _rx(r"\s+from\s+(?:the\s+)?outside(?=\s*(?:[,.?!;:]|e\.g|$))|,?\s+with\s+(?:(?:barely|hardly|almost)\s+(?:any|no)|little|minimal|"
                   r"negligible)\s+(?:loss|degradation|drop|cost|overhead)(?:\s+(?:in|of)\s+[\w-]+)?")
# "put LLM-as-a-judge evaluation itself under scrutiny": evaluate it
_SCRUTINY = _rx(r"\b(?:put|puts|putting|place|places|placing)\s+(?P<x>[^,;:.?!]+?)\s+(?:itself\s+|themselves\s+)?"
                r"under\s+(?:scrutiny|the\s+microscope)\b")


# "Attack side only: which papers …": attacks only ("side" is no word of the topic)
# (also after a heading: "…, methods side:", and before one: "Attack side, physical autonomy: …")
_SIDE_ONLY = _rx(r"(?:^|(?<=,\s))\s*(?P<x>[\w-]+)\s+side(?:\s+only)?\s*(?P<end>:|,(?!\s*(?:but|not|and|or|except|excluding)\b)(?=[^:?.]{1,60}:))")
# "Before we burn compute, is there work …?": when the asker will read them, no part of the request
_BEFORE_WE = _rx(r"(?:^|(?<=[.!?]\s))\s*before\s+(?:i|we)\b[^,;:?]{0,80},\s*(?P<next>(?:is|are|was|were|what|which|how|why|who|any|has|have|do|does|did|can|could)\b)")
# What the asker would do with the papers, and that they appeared: no part of what they are ("What new
# forecasting architectures came out at ICLR 2025 that I could try against my PatchTST baseline?")
_ASKERS_USE = _rx(r"\s+(?:that|which)\s+(?:i|we)\s+(?:could|can|might|may|should|would)\s+(?:try|use|adopt|test|reuse|borrow|apply|"
                  r"run|plug\s+in|build\s+on|compare)\b[^?.!;]*")
_APPEARED = _rx(rf"\s+(?:came\s+out|(?:were|was)\s+(?:published|presented|accepted)|appeared)(?:\s+(?:at|in)\s+{_VENUE})?(?=\s|[,?.!;]|$)")


# Phrases said in other words, in this order: the venue's year goes, "when you don't have X" is "without
# X", "as a lens on X" studies it, "under scrutiny" evaluates, "as the backbone", what is said of any
# paper, what the asker would do with the papers and that they appeared go, "Who runs X?" and "Where does X
# show up?" use X, "X side only:" is "X only:", "Before we …," goes
_PLAIN_WORDS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (_THIS_YEAR, " "),
    (_LACKING, "without "),
    (_LENS, "to study"),
    (_SCRUTINY, lambda m: f"evaluate {m.group('x')}"),
    (_AS_A_ROLE, ""),
    (_WHO_RUNS, "Who uses "),
    (_SIDE_ONLY, lambda m: f"{m.group('x')} only{m.group('end')}"),
    (_BEFORE_WE, lambda m: m.group("next").capitalize()),
    (_SAID_OF_ANY, ""),
    (_ASKERS_USE, ""),
    (_APPEARED, ""),
    (_WHERE_SHOWS, lambda m: f"Which papers use {m.group('x')} "),
)
# A request that points back "in that direction" or "this way" at what the asker said before ("anything along those
# lines" is `_ALONG_THOSE`'s)
# What a request names by pointing back at the story before it: "models that hold up under these conditions"
_POINTS_AT = _rx(r"\b(?:these|those|such)\s+(?:[\w-]+\s+)?(?:conditions|circumstances|situations?|cases|failures?|"
                 r"failure\s+modes|problems?|issues?|pain\s+points)\b")
# The asker telling their own story ("I maintain …", "We're building …", "I'm an epidemiologist …")
_NARRATES = _rx(r"^\s*(?:i|we|i'm|we're|i've|we've|i'd|we'd|our|my)\b")
_IN_THAT_DIRECTION = _rx(r"\b(?:in\s+(?:that|this|the\s+same)\s+(?:direction|way|manner)|(?:that|this|the\s+same)\s+way)\s*[?.!]?\s*$")
# "Which papers do this kind of thing purely at sampling time?": what the asker wants to do, then the tail
_DO_THAT_KIND = _rx(r"^\s*(?:which|what|any)\s+(?:papers|works|methods|ones|studies)\s+(?:do|does|did|handle|handles|can\s+do)\s+"
                    r"(?:(?:this|that|the\s+same|these|those|such)\s+(?:kinds?|sorts?|types?)\s+of\s+(?:things?|stuff|tasks?|work)|"
                    r"(?:this|that|these|those)(?:\s+things)?|(?:all|any)\s+of\s+(?:this|that|these|those))\b(?P<tail>[^?]*)\?*\s*$")


def restate(question: str) -> str:
    """The plain question a conversational request asks (unchanged when it is one already)."""
    # (a typed apostrophe is often the typographic one: "I’m looking for …")
    text = original = _GREETING.sub("", question.replace("’", "'")).strip()
    text = re.sub(r";\s+(?=(?:i|we)\b)", ". ", text, flags=re.I)  # "X doesn't interest me; I want Y": two sentences
    for phrase, plain in _PLAIN_WORDS:
        text = phrase.sub(plain, text).strip()
    text = re.sub(r"\s+([,?.!;])", r"\1", re.sub(r"\s{2,}", " ", text)) if text != original else text
    text = _HEAVY_LIFTING.sub(lambda m: f"built on {m.group('x')}", text)
    m = _NOT_ABOUT.search(text)
    if m:
        # what is set aside follows the sentence that sets it aside (a sentence after it stays whole)
        stop = next((e.start() for e in _SENTENCE_END.finditer(text, m.end())
                     if not _ABBREVIATION_END.search(text[: e.start()])), len(text))
        head = (text[: m.start()] + (m.group("kind") or m.group("kind2") or m.group("kind3")) + text[m.end(): stop]).rstrip()
        end = head[-1] if head[-1] in "?.!" else ""
        x = m.group("x") or m.group("x3") or re.sub(r"\s*(?:,\s*)?\b(?:nor|and\s+not|or)\b\s*", " or ", m.group("neither"))
        x = re.sub(r"\s+either\s*$", "", x.strip())
        text = f"{head.rstrip(' ?.!')}, not {x}{end}{text[stop:]}"
    counts = _COUNTS_BUT.search(text)
    start = text.rfind(";", 0, counts.start()) if counts else -1
    if counts and start >= 0:  # the clause after the semicolon is inclusive: what it sets aside stays
        text = f"{text[:start]}, not {counts.group('x')}{counts.group('end')}"
    text = _PEOPLE_GET.sub(lambda m: f"{m.group('wh')} do {m.group('x')} ", text)
    reverse = _REVERSE_HEADING.match(text)
    if reverse:
        rest = reverse.group("rest").rstrip(" ?.!")
        text = f"{rest[0].upper()}{rest[1:]}, not {reverse.group('x')}?"
    unchanged = question if text == original else text  # what is returned when nothing more is restated
    # "Before I trust that, I'd like work that …": the asker's own clause before a request opens nothing
    sentences = [m.group("rest") if m and _OPENERS.match(m.group("rest")) else s
                 for s in _sentences(text) for m in [_OWN_LEAD.match(s)]]
    if not sentences:
        return question
    saying = [s for s in sentences if _requests_something(s)]
    # a sentence that asks for papers in so many words ("I'm looking for papers that measure …") is the
    # request, not a question before it that introduces the topic ("Do LLMs' accounts of themselves hold up?")
    request = next((s for s in saying if _OPENERS.match(s) and _FOR_PAPERS.search(s) and not _refines(s)), None) \
        if not any(_requests(s) for s in saying[:1]) else None
    request = request or next((s for s in saying if _asks(s) and not _refines(s)), None)
    if request is not None and request is not sentences[0]:
        # "Label shift only: … Which papers deal with that kind of shift?": the kind the sentences before it name
        named = _kind_named(request, sentences[: sentences.index(request)])
        if named != request:
            sentences = [named if s is request else s for s in sentences]
            request = named
    does = _DO_THAT_KIND.match(request) if request is not None else None
    if request is not None and (does or _IN_THAT_DIRECTION.search(request)):
        # "I want to teach a text-to-image model a new subject. Which papers do customization in that direction?",
        # "I'd like to fill in frames between two keyframes, … Which papers do this kind of thing purely at sampling
        # time?": what the asker wants to do is what is asked (done as the request's tail says)
        wants = [w.group("v") for s in sentences[: sentences.index(request)] for w in [_WANTS_TO.search(s)] if w]
        if wants:
            tail = does.group("tail").rstrip() if does else ""
            pointing, request = request, f"Which papers {wants[0].strip()}{tail}?"
            sentences = [request if s is pointing else s for s in sentences]
    back = _points_back(sentences)
    anaphoric = _does_this(sentences) or back
    if anaphoric and (request is None or back):
        aside = " or ".join(x for x in map(_set_aside, sentences) if x)
        return f"{anaphoric.rstrip('?')}, not {aside}?" if aside else anaphoric
    if len(sentences) > 1 and _NARRATES.match(sentences[0]) and not any(map(_recalls, sentences)) and (
            (request is None and _asks(sentences[-1]) and not _requests_something(sentences[-1])
             and not _WHICH_WAS_IT.match(sentences[-1]))
            or (request is not None and request is not sentences[0] and _POINTS_AT.search(request))):
        # "I maintain causal graphs for a manufacturing line. New sensors … On top of that, … Is there work that
        # helps with either problem?", "… In rain or fog … our 3D detector falls apart. We'd like models that hold
        # up under these conditions. What should we read?": the asker's story is what papers are sought for, a
        # description to search (read as a question, the whole story was what "no abstract states", and "these
        # conditions" a topic)
        return " ".join(s.strip() for s in sentences if _requests_something(s) or s is request)
    if request is None:  # a description of a paper, in as many sentences as it takes ...
        asides = [_set_aside(s) for s in sentences]
        if not asides[0] and any(asides):
            # ... unless a sentence after the first sets something aside: the first then names what is wanted
            # ("Papers built on extragradient methods. LLM alignment framed as a game doesn't count.",
            # "Object detection on ordinary 2D images. Skip anything on LiDAR or 3D detection.")
            kept = " ".join(s.strip().rstrip(" .!?") for s, x in zip(sentences, asides)
                            if not x and _says_something(s) and not _PREFERENCE.match(s))
            # a heading that asks for papers is a question; a description stays one
            end = "?" if _PAPERS_HEADING.match(sentences[0]) else "."
            return f"{kept}, not {' or '.join(x for x in asides if x)}{end}"
        return unchanged
    if request is not sentences[0] and _WHICH_WAS_IT.match(request):
        # "I read that a benchmark … found X. Which paper was that, and how big was the margin?": the recalled
        # claim is what is asked, checked as said (a second question of it asks nothing of its own)
        before = sentences[sentences.index(request) - 1]
        if _recalls(before):
            return _opened(before).rstrip(" .!?") + "?"
    if request is not sentences[0] and (_REFERS_BACK.search(request) or (
            _OF_IT.search(request) and _ONE_PAPER_SAYS.match(sentences[sentences.index(request) - 1]))):
        # "In the analysis of the AlgoPerf competition, AdamW won. Why do the authors think it won?" asks of
        # the paper the sentence before it describes, and what that sentence claims is the premise
        return question
    # a later question that asks nothing of its own ("How did they do it?") keeps its question word
    after = sentences[sentences.index(request) + 1:]
    how = next((m.group(0).strip().lower() for s in after if not _says_something(s)
                for m in [re.match(r"^\s*(?:how|why)\b", s, re.I)] if m), None)
    out = request.strip()
    m = _HEADING_CONTRAST.match(out)
    if m:  # the question, then the heading that says what kind it wants
        rest = m.group("rest").rstrip(" ?.!")
        out = f"{rest[0].upper()}{rest[1:]}, {_lower_first(m.group('head'))}?"
    contrast = ""
    m = _LEADING_CONTRAST.match(out)
    if m and _requests(m.group("rest")):
        contrast, out = _lower_first(m.group("contrast")), m.group("rest")
    m = _LEADING_SETTING.match(out)
    setting = ""
    if m and not _OPENERS.match(out):
        setting, out = _lower_first(m.group("setting")), m.group("rest")
        if re.match(r"when", setting, re.I):
            # "When the passage handed to an LLM contradicts what it learned, which papers measure faithfulness to
            # the context …?": the case that motivates the question, which its request words again; read as a
            # setting, every word of it was needed ("not stated: when passage handed")
            setting = ""
    out = _opened(out)
    out = _WHAT_WORK.sub(lambda m: f"Which {m.group('kind') + ' ' if m.group('kind') else ''}papers ", out)
    out = _HEADING.sub(lambda m: "Which papers study " if m.group(0).split()[-1].lower() in ("on", "about", "regarding")
                       else "Which papers " + m.group(0).split(None, 1)[1], out)
    if setting:  # after the request's first clause: "how are questions generated in GSM-Symbolic, and …"
        end = out.rstrip(" ?.!")
        # (not inside an aside: "… side of the data (captions, soundscape descriptions) …" took the setting in it;
        # before a contrast, which the reading sets aside whole)
        outside = re.sub(r"\([^()]*\)", lambda p: "_" * len(p.group(0)), end)
        cut = re.search(r",|\s+and\s+(?:how|why|what|which|when|where)\b|\s+(?:instead\s+of|rather\s+than|as\s+opposed\s+to)\b",
                        outside)
        at = cut.start() if cut else len(end)
        out = f"{end[:at]} {setting}{end[at:]}"
    if contrast:
        out = f"{out.rstrip(' ?.!')}, {contrast}"
    examples = [m.group("x") for s in after for m in [_EXAMPLES_SENTENCE.match(s)] if m]
    if examples:
        out = f"{out.rstrip(' ?.!')}, e.g. {'; '.join(examples)}"
    aside = " or ".join(x for x in (_set_aside(s) for s in sentences if s is not request) if x)
    if aside and not contrast:
        out = f"{out.rstrip(' ?.!')}, not {aside}"
    if how and not _recalls(request):  # a recalled claim is checked as said, without "and how"
        out = f"{out.rstrip(' ?.!')}, and {how}"
    out = out.rstrip()
    if out == text.strip():
        return unchanged
    if _WH.match(out):  # a request turned into a question asks it, as a question opens
        return out[0].upper() + out[1:].rstrip(" ?.!") + "?"
    return out if out.endswith(("?", ".", "!")) else out + "?"
