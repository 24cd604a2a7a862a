"""Named entities (people, places, organizations, tools) found offline, for the memory graph.

No maintained PyPI package ships an entity model that loads offline here, so this is a documented
method rather than a trained tagger:

1. Patterns that carry their kind: titles before a name ("Dr. Ana Ruiz" → person), @handles
   (person), company and institution suffixes ("Acme Inc", "University of Leeds" → organization),
   street and landscape words ("Baker Street", "Lake Tahoe" → place), CamelCase product names and
   a list of well-known tools and languages ("PostgreSQL", "Terraform" → tool), and short lists of
   well-known organizations, places and first names.
2. Capitalised spans elsewhere: runs of capitalised words (with "of", "de", "van", ... inside).
   A word that only opens a sentence or a line is dropped unless it also appears capitalised
   mid-sentence (so "Renew" at the start of a sentence is not a name); title-case lines (headings)
   are skipped.
3. The kind of a span no pattern decided is the closest, in MiniLM's space, of four kind
   prototypes: the mean vector of a short description and ten example names of that kind (one
   batch of short texts: the spans' vectors; the prototypes are computed once per embedder),
   nudged by the word before it ("in", "at", "from" → place; "with", "met",
   "told" → person). Without an embedder, that cue or the span's shape decides.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memlane.ingest.facts import is_key_value

KINDS = ("person", "place", "organization", "tool")
MAX_ENTITIES = 12
MAX_EMBEDDED = 5
CUE_BONUS = 0.06

# Each kind is the mean of its description's and its examples' vectors (a prototype): on names
# alone, MiniLM tells kinds apart better by their likeness to examples than to a description.
KIND_EXAMPLES = {
    "person": ["Maria Garcia", "John Smith", "Aiko Tanaka", "Olivia", "Mohammed Ali", "Dr. Jones", "Grandma",
               "Pierre Dubois", "Emily", "Raj Patel"],
    "place": ["Paris", "Lake Como", "Kyoto", "Nairobi", "Bavaria", "Mount Fuji", "Reykjavik", "Chiang Mai",
              "Patagonia", "Sevilla"],
    "organization": ["Acme Corporation", "Deutsche Bank", "Oxford University", "Harbor Logistics", "Smith & Sons",
                     "Red Cross", "City Council", "Bluewave Consulting", "Allianz Insurance", "Nordic Airlines"],
    "tool": ["PostgreSQL", "Kubernetes", "NumPy", "Photoshop", "VS Code", "pytest", "React", "Jenkins", "Redis",
             "Webpack"],
}
KIND_DESCRIPTIONS = {
    "person": "a person's name, a first name or a full name of a man or a woman",
    "place": "a place: a city, a country, a region, a street or a landmark",
    "organization": "an organization: a company, a business, an agency, a school or an institution",
    "tool": "a software tool, a programming language, an app, a framework or a database",
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _by_lower(text: str) -> dict[str, str]:
    return {word.lower(): word for word in text.split()}


KNOWN_TOOLS = _by_lower("""Python JavaScript TypeScript Java Kotlin Swift Rust Go Golang Ruby PHP Perl Scala
    Haskell Elixir Erlang Clojure Lua Julia Fortran COBOL SQL PostgreSQL Postgres MySQL SQLite MongoDB Redis Cassandra
    DynamoDB Elasticsearch OpenSearch Kafka RabbitMQ Docker Kubernetes Helm Terraform Ansible Jenkins GitHub GitLab
    Bitbucket Git Linux Ubuntu Debian Windows macOS iOS Android React Vue Angular Svelte Django Flask FastAPI Rails
    Spring Node.js Deno npm pip Poetry pytest NumPy pandas PyTorch TensorFlow Jupyter VSCode Vim Emacs Excel Word
    PowerPoint Figma Notion Slack Jira Confluence Trello Zoom Teams Gmail Outlook Chrome Firefox Safari AWS Lambda
    S3 EC2 Azure GCP BigQuery Snowflake Airflow Spark Hadoop Grafana Prometheus Datadog Sentry Nginx Apache
    Bash Zsh Markdown JSON YAML GraphQL REST gRPC OAuth Stripe Shopify WordPress Photoshop Blender Unity Unreal
    LaTeX Obsidian Dropbox MiniLM ONNX Pinecone Qdrant Weaviate Milvus pgvector FAISS Chroma LangChain OpenAPI
    Vite Webpack Tailwind Bootstrap Playwright Selenium Cypress Postman Homebrew WhatsApp Telegram Signal""")
KNOWN_ORGS = _by_lower("""Google Microsoft Apple Amazon Meta Facebook OpenAI Anthropic Mozilla IBM Intel
    Netflix Spotify Uber Airbnb Tesla NASA UNICEF UNESCO WHO NATO IKEA Samsung Sony Nvidia Oracle Salesforce
    Adobe Twitter LinkedIn Wikipedia Reddit Cloudflare DigitalOcean Hetzner HSBC Barclays Lufthansa Ryanair
    EasyJet Airbus Boeing Siemens Bosch Deloitte KPMG McKinsey Accenture Red Cross""")
KNOWN_PLACES = _by_lower("""London Paris Berlin Madrid Rome Lisbon Dublin Amsterdam Brussels Vienna Prague
    Warsaw Zurich Geneva Munich Hamburg Milan Barcelona Stockholm Oslo Copenhagen Helsinki Athens Istanbul Moscow
    Kyiv Tokyo Osaka Kyoto Seoul Beijing Shanghai Singapore Sydney Melbourne Auckland Toronto Vancouver Montreal
    Boston Chicago Seattle Portland Denver Austin Dallas Houston Miami Atlanta Brooklyn Manhattan California Texas
    Florida Oregon Colorado Hawaii Alaska Mexico Brazil Argentina Chile Peru Canada France Germany Spain Italy
    Portugal Ireland England Scotland Wales Britain UK USA America Europe Asia Africa Australia Japan China India
    Korea Sweden Norway Denmark Finland Iceland Netherlands Belgium Switzerland Austria Poland Greece Turkey Egypt
    Morocco Kenya Nigeria Thailand Vietnam Indonesia Philippines Nepal Bali Alps Yosemite Tahoe""")
FIRST_NAMES = _words("""james john robert michael william david richard joseph thomas charles christopher daniel
    matthew anthony mark paul steven andrew joshua kevin brian george timothy ronald jason edward jeffrey ryan
    jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel frank gregory raymond
    alexander patrick jack dennis jerry tyler aaron jose adam henry nathan peter zachary kyle noah ethan liam
    lucas oliver mary patricia jennifer linda elizabeth barbara susan jessica sarah karen nancy lisa betty
    margaret sandra ashley kimberly emily donna michelle dorothy carol amanda melissa deborah stephanie rebecca
    sharon laura cynthia kathleen amy angela shirley anna brenda pamela emma nicole helen samantha katherine
    christine debra rachel carolyn janet catherine maria heather diane ruth julie olivia joyce virginia victoria
    kelly lauren christina joan evelyn judith megan andrea cheryl hannah jacqueline martha gloria teresa ann sara
    madison frances kathryn janice jean abigail alice judy sophia grace denise amber doris marilyn danielle
    beverly isabella theresa diana natalie brittany charlotte marie kayla alexis lori caroline melanie ana ana
    carlos juan luis miguel sofia lucia mateo hugo elena marta pablo javier priya raj arjun wei li chen yuki
    hiroshi kenji aisha fatima omar ali mohammed ahmed tom tim ben sam alex max jon dan joe bob bill jim mike
    nick chris kate katie jane jenny meg sue amy lily leo finn ava mia zoe ella chloe ivy ines nora greta""")

_NAME_PREFIX = r"(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sir|Dame|Aunt|Uncle|Grandma|Grandpa)\.?"
_CAP = r"[A-Z][a-zà-ÿ'’]+(?:-[A-Z][a-zà-ÿ]+)?"
PERSON_TITLE = re.compile(rf"\b{_NAME_PREFIX}\s+({_CAP}(?:\s+{_CAP})?)")
HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z][A-Za-z0-9_]{1,30})\b")
ORG_SUFFIX = re.compile(
    rf"\b((?:{_CAP}|[A-Z]{{2,}})(?:\s+(?:{_CAP}|[A-Z]{{2,}}|&))*\s+(?:Inc|Ltd|LLC|GmbH|AG|SA|plc|Corp|Corporation|"
    r"Company|Co|Bank|University|College|Institute|Foundation|Agency|Council|Ministry|Hospital|Clinic|School|"
    r"Group|Labs?|Society|Association|Partners|Studios?|Insurance|Airlines?|Consulting|Technologies|Systems)\b\.?)"
    rf"|\b((?:University|Bank|Ministry|Department|Museum|Bank) of(?:\s+the)?\s+{_CAP}(?:\s+{_CAP})*)"
)
PLACE_SUFFIX = re.compile(
    rf"\b((?:{_CAP}\s+)+(?:Street|St|Road|Rd|Avenue|Ave|Lane|Boulevard|Square|Park|Lake|River|Mountains?|Beach|"
    r"Bay|Island|Islands|Valley|Canyon|Airport|Station|County|City|Province|Coast)\b)"
)
CAMEL = re.compile(r"\b([A-Z]?[a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Za-z]*)\b")
_SPAN = re.compile(
    rf"{_CAP}(?:\s+(?:(?:of|de|del|della|van|von|da|di|du|la|le|der|den)\s+)?{_CAP})*"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*+•>#]+\s*|\d+[.)]\s*)?)$")
_PLACE_CUE = re.compile(r"\b(?:in|at|to|near|visit(?:ed|ing)?|via|around|across|outside)\s+$", re.IGNORECASE)
_PERSON_CUE = re.compile(
    r"\b(?:with|met|told|asked|called|emailed|thanks|thank|and|by|dear|hi|hello|cc)\s+$", re.IGNORECASE)
_NOT_NAMES = _words("""I I'm I've I'd I'll The A An This That These Those My Our Your Their His Her Its We You He She
    They It There Here Then When Where What Why How Who Which If But And Or So Also Yes No Not Note Notes Todo TODO
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
    September October November December Today Tomorrow Yesterday Hi Hello Dear Thanks Thank Please OK Okay
    Mr Mrs Ms Dr Prof Sir Step Phase Part Chapter Section Figure Table Appendix Summary Overview Introduction
    Conclusion Key Important Warning Tip Done Next Last First Second Third New Old Total Re Fwd Subject From To Cc
    Q A FAQ LGBTQ LGBTQ+ Christmas Easter Halloween Thanksgiving Ramadan Diwali Hanukkah English French
    German Spanish Italian Chinese Japanese American British European""")


@dataclass(frozen=True)
class Entity:
    text: str
    kind: str

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "kind": self.kind}


@dataclass
class _Found:
    text: str
    kind: str | None  # None: to be decided by the embedder (or the fallback)
    count: int
    first: int
    cue: str | None


def find(text: str, limit: int = MAX_ENTITIES) -> list[_Found]:
    """Entity candidates, most mentioned first (kind None where no pattern decided it)."""
    found: dict[str, _Found] = {}

    def add(span: str, kind: str | None, at: int) -> None:
        span = " ".join(span.split()).strip(" .,'’")
        if len(span) < 2 or span in _NOT_NAMES:
            return
        key = span.lower()
        if key in found:
            found[key].count += 1
            if found[key].kind is None and kind is not None:
                found[key].kind = kind
            return
        before = text[max(0, at - 20):at]
        cue = "place" if _PLACE_CUE.search(before) else "person" if _PERSON_CUE.search(before) else None
        found[key] = _Found(span, kind, 1, at, cue)

    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for match in PERSON_TITLE.finditer(text):
        add(match.group(1), "person", match.start(1))
        taken.append(match.span())
    for match in HANDLE.finditer(text):
        add("@" + match.group(1), "person", match.start())
        taken.append(match.span())
    for match in ORG_SUFFIX.finditer(text):
        group = 1 if match.group(1) else 2
        if free(*match.span(group)):
            add(match.group(group), "organization", match.start(group))
            taken.append(match.span(group))
    for match in PLACE_SUFFIX.finditer(text):
        if free(*match.span(1)):
            add(match.group(1), "place", match.start(1))
            taken.append(match.span(1))
    for match in CAMEL.finditer(text):
        word = match.group(1)
        if free(*match.span(1)) and word.lower() not in KNOWN_ORGS and word not in _NOT_NAMES:
            add(KNOWN_TOOLS.get(word.lower(), word), "tool", match.start(1))
            taken.append(match.span(1))
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9.+#-]*[A-Za-z0-9+#]", text):
        word = match.group()
        known = KNOWN_TOOLS.get(word.lower())
        # A tool's name in lower case counts only when it is unambiguous (not "go", "word", "spring").
        if known and free(*match.span()) and (word[0].isupper() or word == known or len(word) >= 5
                                             and word.lower() not in _AMBIGUOUS_LOWER):
            add(known, "tool", match.start())
            taken.append(match.span())

    mid_sentence_caps = _mid_sentence_capitalised(text)
    for line_start, line in _lines(text):
        if _title_case(line) and not is_key_value(line):
            continue
        for match in _SPAN.finditer(line):
            start = line_start + match.start()
            if not free(start, line_start + match.end()):
                continue
            words = match.group().split()
            if _SENTENCE_START.search(text[max(0, start - 12):start]):
                first = words[0]
                if (first.lower() not in KNOWN_PLACES and first.lower() not in KNOWN_ORGS
                        and first not in mid_sentence_caps and first.lower() not in FIRST_NAMES):
                    words = words[1:]
                    start += len(first) + 1
                    if not words or not words[0][0].isupper():
                        continue
            span = " ".join(words)
            if all(w in _NOT_NAMES for w in words):
                continue
            while words and words[0] in _NOT_NAMES:
                start += len(words[0]) + 1
                words = words[1:]
            if not words:
                continue
            span = " ".join(words)
            add(span, _known_kind(span), start)
            taken.append((start, start + len(span)))

    # "Caroline" after "Caroline Smith": the same person, counted with the full name.
    for key, item in list(found.items()):
        if " " in key or key not in found:
            continue
        longer = [o for k, o in found.items() if k != key and key in k.split()]
        if len(longer) == 1 and (item.kind is None or item.kind == longer[0].kind):
            longer[0].count += item.count
            del found[key]
    ranked = sorted(found.values(), key=lambda f: (-f.count, f.first))
    return ranked[:limit]


_AMBIGUOUS_LOWER = _words("""go word teams zoom spring rails signal unity swift apache chrome safari excel
    notion slack lambda spark chroma helm poetry vim word rest pip npm""")


def _known_kind(span: str) -> str | None:
    key = span.lower()
    if key in KNOWN_TOOLS:
        return "tool"
    if key in KNOWN_ORGS:
        return "organization"
    if key in KNOWN_PLACES:
        return "place"
    first = key.split()[0]
    if first in FIRST_NAMES and (len(key.split()) <= 3):
        return "person"
    return None


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    offset = 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _title_case(line: str) -> bool:
    """A heading written in title case ("Research Notes: Vector Databases") names no one."""
    words = re.findall(r"[A-Za-z][\w'’-]*", line.lstrip("#>*-• "))
    if len(words) < 3:
        return False
    capitalised = sum(1 for w in words if w[0].isupper())
    return capitalised / len(words) >= 0.7 and not re.search(r"[.!?]\s*$", line.strip())


def _mid_sentence_capitalised(text: str) -> set[str]:
    out = set()
    for match in re.finditer(r"(?<=[a-z0-9,;)][ \t])([A-Z][a-zà-ÿ'’]+)", text):
        out.add(match.group(1))
    return out


def _normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def decide(found: list[_Found], vectors: Sequence[Sequence[float]] | None,
           kind_vectors: dict[str, list[float]] | None) -> list[Entity]:
    """Kinds for the undecided candidates (the first len(vectors) of them, in order), by MiniLM
    similarity to the kind descriptions plus the cue word; without vectors, by cue and shape."""
    undecided = [f for f in found if f.kind is None]
    if vectors and kind_vectors:
        units = dict(kind_vectors)  # prototypes: means of unit vectors, kept unnormalised
        for item, vector in zip(undecided, vectors, strict=False):
            unit = _normalise(vector)
            scores = {k: sum(a * b for a, b in zip(unit, kv, strict=True)) for k, kv in units.items()}
            if item.cue:
                scores[item.cue] += CUE_BONUS
            item.kind = max(scores, key=lambda k: scores[k])
    for item in undecided:
        if item.kind is None:
            item.kind = item.cue or ("person" if len(item.text.split()) == 2 else "organization")
    return [Entity(f.text, f.kind or "organization") for f in found]


def extract_entities(text: str, embedder: object | None = None, kind_vectors: dict | None = None,
                     limit: int = MAX_ENTITIES) -> list[Entity]:
    """find + decide, embedding the undecided spans itself (tests and the bench; the summarizer
    batches them with the keyphrases instead)."""
    found = find(text, limit)
    undecided = [f.text for f in found if f.kind is None][:MAX_EMBEDDED]
    if embedder is not None and undecided and kind_vectors is None:
        kind_vectors = kind_prototypes(embedder)
    vectors = None
    if embedder is not None and undecided and kind_vectors:
        vectors = embedder.embed_documents(undecided)  # type: ignore[attr-defined]
    return decide(found, vectors, kind_vectors)


def kind_prototypes(embedder: object) -> dict[str, list[float]]:
    """kind → the mean of its description's and examples' unit vectors."""
    out: dict[str, list[float]] = {}
    for kind in KINDS:
        texts = [KIND_DESCRIPTIONS[kind], *KIND_EXAMPLES[kind]]
        vectors = [_normalise(v) for v in embedder.embed_documents(texts)]  # type: ignore[attr-defined]
        out[kind] = [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]
    return out


def count_kinds(entities: Sequence[Entity]) -> Counter[str]:
    return Counter(e.kind for e in entities)
