"""The role of each sentence of an abstract: background, gap, contribution, method, result, outlook.

Abstracts follow one plan: what the field does (background), what is missing or hard (gap), what
this paper does (contribution), how (method), what it shows (result), and sometimes code or future
work (outlook). The rules read that plan from where a sentence stands and the words it uses:

- Sentences before the paper first speaks of itself ("we", "our", "this paper/work", "here", the
  short name of its title) are background, or a gap when they say what fails, lacks or remains hard.
- From there on: a sentence reporting experiments, measurements or comparisons is a result; one
  announcing what the paper proposes is a contribution; one describing how it works (by, via,
  consists, first … then, we use/train/design) is a method; one about released code or future work is
  an outlook. A sentence about the paper with none of these cues is a contribution.
- Theory papers: "we prove/show that" is a result; "we establish/derive" too.
- What the field already knows ("it is well-documented that …", "prior work has shown that …") is
  background wherever it stands.

No model, no corpus statistics: the same sentence gets the same role in any abstract position class.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Role = Literal["background", "gap", "contribution", "method", "result", "outlook"]
ROLES: tuple[Role, ...] = ("background", "gap", "contribution", "method", "result", "outlook")
# Roles that state what the paper itself does or finds: the ones an answer quotes.
OWN: frozenset[str] = frozenset({"contribution", "method", "result"})

_SELF = re.compile(
    # "we need better methods", "as we all know", "challenged our understanding": the field's "we", not the paper's
    r"\b(?:we(?!\s+(?:need|must|should|all|humans?|often|usually|typically|know|live)\b)|"
    r"our(?!\s+(?:understanding|lives|daily|everyday|society|world)\b)|ours|us|"
    r"this\s+(?:paper|work|study|article|manuscript|submission|note)|"
    r"in\s+this\s+(?:paper|work|study)|here,?\s+we|the\s+proposed|the\s+present\s+(?:paper|work))\b",
    re.I,
)
_GAP = re.compile(
    r"\b(?:however|but|although|despite|yet|remains?|remained|challeng\w*|limit\w*|lack\w*|fail\w*|"
    r"struggl\w*|unclear|unknown|unexplored|underexplored|overlook\w*|costly|expensive|prohibitive|"
    r"bottleneck\w*|difficult\w*|hard|hinder\w*|suffer\w*|issue|issues|problem\w*|insufficient|"
    r"inefficien\w*|vulnerab\w*|open\s+question|little\s+is\s+known|few\s+works?|rarely|neglect\w*|"
    r"ignor\w*|restrict\w*|impractical|poorly|not\s+well|still)\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:experiment\w*|empirical\w*|evaluat\w*|results?|benchmarks?|outperform\w*|surpass\w*|"
    r"achiev\w*|improv\w*|state[- ]of[- ]the[- ]art|sota|speed-?ups?|reduc\w*\s+\w*\s*by|"
    r"demonstrat\w*|we\s+(?:find|found|observe|observed|show|showed|prove|proved|establish|derive|"
    r"confirm|reveal|validate|verify|report)|(?:find|show|reveal|prove|suggest|indicate|confirm)s?\s+that|"
    r"extensive|ablation\w*|compared\s+(?:to|with)|accuracy|gains?|orders?\s+of\s+magnitude|"
    r"\d+(?:\.\d+)?\s*(?:%|x\b|×|times)|"
    # what a trained system turns out to do: "our agent exhibits …", "fine-tuning it shows significantly
    # stronger performance than …", "zero-shot solve unseen …" ("significantly" alone also says how much a
    # method does: "leveraging this property significantly enhances error detection")
    r"exhibits?|(?:stronger|better|higher|lower|faster|superior)\s+(?:\w+\s+)?than|"
    r"zero-shot\s+(?:solv|generali[sz]|transfer)\w*)",
    re.I,
)
_CONTRIB = re.compile(
    r"\b(?:we\s+(?:\w+\s+)?(?:propose|introduce|present|develop|design|build|create|construct|"
    r"contribute|formulate|study|investigate|explore|examine|analy[sz]e|tackle|address|offer|provide|"
    r"curate|release|collect|put\s+forward|devise|revisit|identify|characteri[sz]e)|"
    r"(?:this|our)\s+(?:paper|work|study)\s+(?:\w+\s+)?(?:proposes|introduces|presents|develops|studies|"
    r"investigates|explores|examines|analy[sz]es|addresses|tackles|provides|offers)|"
    r"to\s+(?:address|tackle|overcome|bridge|fill|solve|mitigate|alleviate|remedy|close)\s+(?:this|these|the\s+\w+)|"
    r"novel|new\s+(?:method|framework|approach|benchmark|dataset|algorithm|paradigm|technique)|"
    r"(?:called|named|dubbed|termed)\b)",
    re.I,
)
_METHOD = re.compile(
    r"\b(?:by\s+\w+ing|via|through|consists?\s+of|comprises?|composed\s+of|leverag\w*|"
    r"first\w*|then|specifically|concretely|in\s+particular|key\s+(?:idea|insight|component)|"
    r"module|component|mechanism|architecture|objective|loss|we\s+(?:use|train|employ|apply|adopt|"
    r"design|model|encode|decompose|combine|incorporate|integrate|learn|optimi[sz]e|estimate|compute|"
    r"construct|parameteri[sz]e|replace|augment|fine-tune|distill|represent|map|align|generate|"
    r"sample|exploit|leverage|introduce\s+an?\s+\w+\s+(?:loss|term|module|layer|mechanism|step))|"
    r"which\s+(?:uses|learns|enables|allows|combines)|allowing|enabling|based\s+on|inspired\s+by|"
    r"algorithm|procedure|pipeline|strategy)\b",
    re.I,
)
_OUTLOOK = re.compile(
    r"(?:https?://|github|\bavailable\s+at\b|open[- ]sourc\w*|publicly\s+available|"
    # the paper's code, not code as a subject ("a benchmark of code models"):
    r"\bcode\s+(?:and\s+(?:data|datasets?|models?|weights)\s+)?(?:is|are|will|has|have|can)\b|"
    r"\bour\s+(?:source\s+)?code\b(?!\s+(?:models?|llms?|generat\w*|agents?|editing|repair))|"
    r"will\s+be\s+(?:released|made)|\bfuture\s+(?:work|research|directions?)\b|\bwe\s+hope\b|"
    # what is left for later: "we outline several open problems", "finally, we discuss …"
    r"\bopen\s+(?:problems?|questions?|challenges?)\b|\bfinally,?\s+we\s+(?:briefly\s+)?(?:discuss|outline|mention)\b|"
    r"\bwe\s+(?:also\s+|further\s+|briefly\s+)?discuss\b|\bwe\s+will\s+(?:release|make|open)|\bupon\s+(?:publication|acceptance)\b|"
    r"project\s+page|\bwebsite\b|\bdemo\b)",
    re.I,
)
# What the authors believe or hope their work leads to: outlook, whatever it names ("We believe this
# demonstrates the feasibility of …")
_BELIEF = re.compile(r"^\W*(?:we|i)\s+(?:firmly\s+|strongly\s+)?(?:believe|hope|envision|anticipate)\b", re.I)
# What the field already knows, said after the paper first speaks of itself: background ("In the setting of
# open-ended text generation, it is well-documented that LLMs tend to generate repetitive …", "Prior research
# has shown that …"; 4 sentences of the 2,115 abstracts, each of them background)
_KNOWN = re.compile(
    r"\b(?:it\s+is\s+(?:well[- ]|widely\s+|commonly\s+|generally\s+)?(?:known|documented|established|recognized|accepted|"
    r"believed)\s+that|it\s+has\s+(?:long\s+)?been\s+(?:widely\s+)?(?:shown|observed|reported|documented|noted|established|"
    r"recognized)\s+that|(?:is|are)\s+(?:well[- ]known|well[- ]documented|widely\s+(?:known|believed|recognized|observed|reported))\b|"
    r"(?:prior|previous|existing|recent|earlier)\s+(?:work|works|studies|research|literature)\s+(?:has|have)\s+"
    r"(?:shown|found|demonstrated|observed|reported))", re.I)
# ... and a sentence that opens with others' work, even with the field's "we" ("Recent works show we can
# linearize LLMs …"), unless it turns to the paper's own ("Prior studies have shown …, but we find …")
_OTHERS_SHOW = re.compile(
    r"^\W*(?:(?:many|several|some)\s+)?(?:recent|prior|previous|existing|earlier)\s+(?:works?|studies|research|papers|literature)\s+"
    r"(?:has\s+|have\s+)?(?:shown|show|found|demonstrated|observed|reported|revealed)\b(?!.*\b(?:but|while|whereas|however)\b)",
    re.I)
_PROVE = re.compile(r"\bwe\s+(?:\w+\s+)?(?:prove|show|establish|derive|demonstrate|find|observe)\b", re.I)


def _short_name(title: str) -> str:
    head = title.split(":", 1)[0].strip() if ":" in title else ""
    return head if head and len(head.split()) <= 3 else ""


def sentence_roles(sentences: Sequence[str], title: str = "") -> list[Role]:
    """The role of each sentence of one abstract, in order."""
    name = _short_name(title)
    name_re = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)") if name and len(name) >= 3 else None

    def speaks_of_itself(s: str) -> bool:
        return bool(_SELF.search(s) or (name_re is not None and name_re.search(s)))

    first_self = next((i for i, s in enumerate(sentences) if speaks_of_itself(s)), None)
    if first_self is None:  # an abstract in the third person: the opening is background, the rest its own
        first_self = 1 if len(sentences) > 2 else 0
    roles: list[Role] = []
    for i, s in enumerate(sentences):
        if i < first_self:
            roles.append("gap" if _GAP.search(s) else "background")
            continue
        if _KNOWN.search(s) and not speaks_of_itself(s) or _OTHERS_SHOW.search(s):
            roles.append("background")
        elif _BELIEF.search(s) or _OUTLOOK.search(s) and not _RESULT.search(s.split("http")[0]) or (
            _OUTLOOK.search(s) and len(s.split()) < 14
        ):
            roles.append("outlook")
        elif _PROVE.search(s) or (_RESULT.search(s) and not _CONTRIB.search(s)):
            roles.append("result")
        elif _CONTRIB.search(s):
            roles.append("contribution")
        elif _METHOD.search(s):
            roles.append("method")
        elif not speaks_of_itself(s) and _GAP.search(s) and i <= first_self + 1 and i < len(sentences) - 2:
            roles.append("gap")  # "However, ..." right after the first self-mention
        else:
            roles.append("contribution" if speaks_of_itself(s) else "method")
    return roles
