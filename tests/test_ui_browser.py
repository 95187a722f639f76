"""The chat UI in a real browser (Playwright + Debian Chromium) against a real server and local LLM."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from rag import RAG, Settings
from rag.fieldmap import HIGHLIGHT
from rag.queue import GenerationQueue
from rag.serve import ServerSettings, running

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"
Q1 = "Which paper proposes a lifelong learning agent for formal theorem proving?"
FOLLOW_UP = "What benchmark does it use?"
LIST_Q = "Which papers study spurious features?"
PAYLOAD = '<img src=x onerror="window.__xss=1">'
XSS_PAPER = {
    "id": "xssPaper01",
    "title": "Sanitizing <script>window.__xss=2</script> markup in scientific paper abstracts",
    "abstract": "We study HTML injection through scientific paper abstracts shown in web interfaces. "
    f"An abstract may carry markup such as {PAYLOAD} that a careless page would run. "
    "Our sanitizer escapes every markup tag in abstracts before a web page renders them.",
    "authors": ["Mallory <b>Markup</b>"],
    "decision": "Oral",
    "source_url": "javascript:window.__xss=3",
}
XSS_QUESTION = "Which paper studies HTML injection and sanitizing markup in paper abstracts?"
TIMEOUT_MS = 300_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    if not CHROMIUM.exists():
        pytest.fail("Debian chromium is not installed: run scripts/setup.sh (apt-get install chromium)")
    root = tmp_path_factory.mktemp("ui")
    corpus = root / "xss.jsonl"
    corpus.write_text(json.dumps(XSS_PAPER) + "\n", encoding="utf-8")
    rag = RAG(Settings(store={"path": root / "chroma"}, retrieval={"top_k": 3}, llm={"max_tokens": 64}))
    rag.ingest([corpus], progress=False)  # added to the auto-seeded 19 papers
    queue = GenerationQueue(slots=1, max_waiting=8, timeout=300)
    with running(rag, ServerSettings(port=0), queue=queue) as srv:
        srv.queue = queue  # type: ignore[attr-defined]
        srv.rag = rag  # type: ignore[attr-defined]
        yield srv


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _open(browser, url: str, outside: list[str]):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = ctx.new_page()
    page.on(
        "request",
        lambda r: None if r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else outside.append(r.url),
    )
    page.goto(url, wait_until="load")
    page.wait_for_selector("#rag-input textarea", timeout=60_000)
    page.wait_for_selector("#rag-chat", state="attached", timeout=60_000)
    return page


RECORD = """turn => {
  window.__frames = [];
  const note = () => {
    const chat = document.querySelector('#rag-chat');
    if (!chat) return;
    const bots = chat.querySelectorAll('[data-testid=bot]');
    if (bots.length < turn) return;
    const text = bots[turn - 1].innerText;
    const f = window.__frames;
    if (text && f[f.length - 1] !== text) f.push(text);
  };
  if (window.__observer) window.__observer.disconnect();
  window.__observer = new MutationObserver(note);
  // the whole body: the chat element may be drawn again (or not yet) when recording starts
  window.__observer.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


PENDING = r"/^(Searching the papers…|Writing the answer…|Waiting in line: [\s\S]*…)$/"


def turn_done(turn: int) -> str:
    """A page function true once turn `turn` is over: the sources panel says done and the bot message
    shows the answer, not a status line (the browser may render the panel a frame before the chat). The
    panel must be this turn's: the previous turn's panel also says done."""
    return (
        f"(() => {{ const b = document.querySelectorAll('#rag-chat [data-testid=bot]'); "
        f"return b.length >= {turn} && !{PENDING}.test(b[{turn - 1}].innerText.trim()) && "
        f"document.querySelector('#rag-sources .rag-sources[data-state=done][data-turn=\"{turn}\"]') !== null; }})()"
    )


def _ask(page, question: str, turn: int) -> list[str]:
    """Submit a question and return every text the bot message showed, in order, until the turn is done.

    A MutationObserver records each state the page rendered, so a fast answer (evidence answers
    arrive within milliseconds of the status line) is not missed by polling.
    """
    page.evaluate(RECORD, turn)
    page.fill("#rag-input textarea", question)
    page.click("#rag-send")
    page.wait_for_function(turn_done(turn), timeout=TIMEOUT_MS)
    return page.evaluate("window.__frames")


def _wait_for_user_message(page, turn: int, text: str) -> None:
    """The chat's `turn`-th user message reads `text`. Waited for, not read once: under load (CI) the chat
    was read while Gradio was still drawing the new list (the turn's status already done), and its second
    user message was momentarily the first question."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    check = (
        "([n, t]) => { const u = document.querySelectorAll('#rag-chat [data-testid=user]'); "
        "return u.length >= n && u[n - 1].innerText.trim() === t; }"
    )
    try:
        page.wait_for_function(check, arg=[turn, text], timeout=60_000)
    except PlaywrightTimeout:
        shown = [u.inner_text() for u in page.locator("#rag-chat [data-testid=user]").all()]
        raise AssertionError(f"user message {turn} is not {text!r}; the chat's user messages: {shown}") from None


def test_chat_streams_cites_opens_a_source_and_follows_up(server, browser, tmp_path: Path) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    # the example questions render after the input (counted at once, they were missed under load in CI)
    page.locator("text=Which papers propose benchmarks").first.wait_for(timeout=30_000)
    page.wait_for_function(
        "document.querySelector('#rag-status').innerText.includes('20 papers')", timeout=30_000
    )

    frames = _ask(page, Q1, turn=1)
    status = [i for i, f in enumerate(frames) if "Searching" in f or "Writing" in f]
    shown = [i for i, f in enumerate(frames) if "Searching" not in f and "Writing" not in f]
    # The user sees progress first, then the answer text replaces it.
    assert status and shown and status[0] < shown[0] and "LeanAgent" in frames[-1], frames
    links = page.locator('#rag-chat a[href^="#rag-src-1-"]')
    assert links.count() >= 1, page.inner_text("#rag-chat")
    target = links.first.get_attribute("href").lstrip("#")
    card = page.locator(f"#{target}")
    assert card.get_attribute("open") is None
    links.first.click()
    page.wait_for_function(f"document.getElementById('{target}').open === true", timeout=5000)
    abstract = card.locator(".rag-abstract")
    assert abstract.is_visible() and len(abstract.inner_text()) > 100
    assert card.locator("mark").count() == 1  # the supporting sentence is highlighted
    assert "openreview.net" in card.locator("a.rag-link").get_attribute("href")
    assert page.locator("#rag-src-1-1 .rag-title").inner_text() == LEAN

    # A second user does not see this conversation.
    other = _open(browser, server.url, outside)
    assert other.locator("#rag-chat [data-testid=user]").count() == 0
    other.context.close()

    _ask(page, FOLLOW_UP, turn=2)
    assert page.locator("#rag-chat [data-testid=bot]").count() == 2
    assert f"Read as: about [1] {LEAN}" in page.inner_text("#rag-sources")  # answered from its abstract
    assert page.locator("#rag-src-2-1 .rag-title").inner_text() == LEAN
    # A marker of the first answer still opens the first answer's card, now folded away.
    assert page.locator("#rag-turn-1").get_attribute("open") is None
    page.locator(f'#rag-chat a[href="#{target}"]').first.click()
    page.wait_for_function(
        f"document.getElementById('{target}').open && document.getElementById('rag-turn-1').open",
        timeout=5000,
    )
    page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
    assert (tmp_path / "chat.png").stat().st_size > 10_000
    assert outside == []  # nothing fetched from the internet
    page.context.close()


def test_a_waiting_question_shows_its_place_in_line_then_its_answer(server, browser) -> None:
    page = _open(browser, server.url, [])
    page.evaluate(RECORD, 1)
    with server.queue.slot():  # someone else's answer holds the one slot
        page.fill("#rag-input textarea", "Which papers study lifelong learning for theorem proving agents?")
        page.click("#rag-send")
        page.wait_for_function(
            "document.querySelector('#rag-chat').innerText.includes('1 question ahead of you')",
            timeout=60_000,
        )
        assert server.queue.stats()["waiting"] == 1
    page.wait_for_function(
        turn_done(1), timeout=TIMEOUT_MS
    )
    frames = page.evaluate("window.__frames")
    assert "Waiting in line" in frames[0] or any("Waiting in line" in f for f in frames[:3]), frames
    assert "ahead of you" not in frames[-1] and "LeanAgent" in frames[-1], frames[-1]
    page.context.close()


def test_list_answer_titles_match_the_sources_panel_numbers(server, browser, tmp_path: Path) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, LIST_Q, turn=1)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # the list is drawn again while its LaTeX is rendered: give it the time to settle
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("document.querySelectorAll('#rag-chat [data-testid=bot] li').length >= 2", timeout=30_000)
    items = page.locator("#rag-chat [data-testid=bot] li")
    assert items.count() >= 2, page.inner_text("#rag-chat")
    for i in range(items.count()):
        item = items.nth(i)
        title = item.locator("strong").first.inner_text()
        href = item.locator('a[href^="#rag-src-1-"]').first.get_attribute("href")
        card_title = page.locator(f"{href} .rag-title").inner_text()
        assert card_title == title, (href, title, card_title)  # [n] is the panel's n
        assert len(item.inner_text()) > len(title) + 20  # the quoted abstract sentence follows
    page.screenshot(path=str(tmp_path / "list.png"), full_page=True)
    assert outside == []
    page.context.close()


def test_the_cited_papers_download_as_bibtex_and_csv(server, browser, tmp_path: Path) -> None:
    import bibtexparser

    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, LIST_Q, turn=1)
    button = page.locator("#rag-download")
    page.wait_for_function("!document.querySelector('#rag-download').disabled", timeout=30_000)
    cards = page.locator("#rag-sources .rag-title")
    shown = [cards.nth(i).inner_text() for i in range(cards.count())]
    with page.expect_download(timeout=30_000) as got:
        button.click()
    bib = tmp_path / "papers.bib"
    got.value.save_as(bib)
    assert got.value.suggested_filename == "iclr2025-papers.bib"
    lib = bibtexparser.parse_string(bib.read_text(encoding="utf-8"))
    assert lib.failed_blocks == [] and len(lib.entries) >= 2
    titles = [e["title"].strip("{}") for e in lib.entries]
    assert set(titles) <= set(shown), (titles, shown)  # the papers the answer cites, nothing else
    assert all(e["booktitle"].endswith("Learning Representations") for e in lib.entries)
    with page.expect_download(timeout=30_000) as got:  # the panel's button: every paper it shows
        page.locator("#rag-download-sources").click()
    assert got.value.suggested_filename == "iclr2025-sources.bib"
    panel = tmp_path / "sources.bib"
    got.value.save_as(panel)
    every = bibtexparser.parse_string(panel.read_text(encoding="utf-8")).entries
    # the panel's cards, counted once the browser has settled its last render (a count taken while it
    # swaps the panel's HTML can see the old cards beside the new ones: 20 for 10, once in CI)
    page.wait_for_function(
        f"document.querySelectorAll('#rag-sources .rag-source').length === {len(every)}", timeout=10_000
    )
    assert len(every) >= len(lib.entries)
    assert {e["title"].strip("{}") for e in every} == set(shown)

    page.locator("#rag-export-format input").click()
    page.get_by_role("option", name="CSV").click()
    for _ in range(20):  # the button gets the CSV file a moment after the choice
        page.wait_for_timeout(250)
        with page.expect_download(timeout=30_000) as got:
            page.locator("#rag-download").click()
        if got.value.suggested_filename.endswith(".csv"):
            break
    assert got.value.suggested_filename == "iclr2025-papers.csv"
    table = tmp_path / "papers.csv"
    got.value.save_as(table)
    assert table.read_text(encoding="utf-8").splitlines()[0] == "paper_id,title,authors,decision,url"
    assert len(table.read_text(encoding="utf-8").splitlines()) == len(titles) + 1
    assert outside == []
    page.context.close()


def test_markup_from_the_corpus_is_shown_as_text(server, browser, tmp_path: Path) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, XSS_QUESTION, turn=1)
    panel = page.inner_text("#rag-sources")
    assert XSS_PAPER["title"] in panel
    card = page.locator("#rag-sources details", has_text="Sanitizing").first
    card.locator("summary").click()
    assert PAYLOAD in card.locator(".rag-abstract").inner_text()
    assert "Mallory <b>Markup</b>" in card.inner_text()
    links = card.locator("a.rag-link")
    hrefs = [links.nth(i).get_attribute("href") or "" for i in range(links.count())]
    # The corpus's javascript: URL is dropped at load; the paper keeps its OpenReview link.
    assert all(h.startswith("https://openreview.net/") for h in hrefs), hrefs
    page.screenshot(path=str(tmp_path / "xss.png"), full_page=True)
    assert page.evaluate("window.__xss") is None
    assert page.locator('img[src="x"]').count() == 0 and page.locator("#rag-sources script").count() == 0
    assert outside == []
    page.context.close()


LINK_FIELD = "#rag-permalink input, #rag-permalink textarea"
EXTRA_PAPER = {
    "id": "linkPaper01",
    "title": "Permalinks for reproducible answers in paper chat systems",
    "abstract": "We study links that ask a question again. A link stores the question and its options.",
    "authors": ["Lin K. Maker"],
    "decision": "Poster",
}


def _answer_from_link(browser, url: str, outside: list[str]):
    page = _open(browser, url, outside)
    page.wait_for_function(turn_done(1), timeout=TIMEOUT_MS)
    return page


def test_a_permalink_asks_again_and_says_when_the_store_changed(server, browser, tmp_path: Path) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    page.get_by_text("Search options").click()
    page.locator("#rag-all input").check()  # an option the link must carry
    _ask(page, LIST_Q, turn=1)
    page.wait_for_function(
        f"[...document.querySelectorAll('{LINK_FIELD}')].some(e => e.value.includes('?q='))", timeout=30_000
    )
    link = page.locator(LINK_FIELD).first.input_value()
    assert link.startswith(server.url) and "all=1" in link and "&v=" in link, link
    shown = page.inner_text("#rag-chat [data-testid=bot]")

    again = _answer_from_link(browser, link, outside)
    assert again.inner_text("#rag-chat [data-testid=user]") == LIST_Q
    assert again.inner_text("#rag-chat [data-testid=bot]") == shown  # the same answer
    again.get_by_text("Search options").click()
    assert again.locator("#rag-all input").is_checked()
    assert again.inner_text("#rag-link-notice").strip() == ""
    again.context.close()

    corpus = tmp_path / "extra.jsonl"
    corpus.write_text(json.dumps(EXTRA_PAPER) + "\n", encoding="utf-8")
    server.rag.ingest([corpus], progress=False)
    try:
        changed = _answer_from_link(browser, link, outside)
        assert "This link was made on other papers" in changed.inner_text("#rag-link-notice")
        assert changed.locator("#rag-chat [data-testid=bot]").count() == 1  # and today's answer
        changed.context.close()
    finally:
        server.rag.remove(EXTRA_PAPER["id"])
    bad = _open(browser, server.url + "/?q=hi&retriever=magic", outside)
    bad.wait_for_selector("text=is not one of dense", timeout=30_000)  # a clear message, no answer
    assert outside == []
    page.context.close()


def test_an_author_and_similar_papers_open_from_a_source_card(server, browser) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, Q1, turn=1)
    card = page.locator("#rag-src-1-1")
    card.locator("summary").click()
    author = card.locator("a.rag-author").first
    name = author.inner_text()
    with page.expect_popup() as popup:
        author.click()
    theirs = popup.value
    theirs.wait_for_function(
        turn_done(1), timeout=TIMEOUT_MS
    )
    assert theirs.inner_text("#rag-chat [data-testid=user]") == f"Papers by {name}"
    assert LEAN in theirs.inner_text("#rag-sources")  # their paper is listed
    cards = theirs.locator("#rag-sources .rag-authors")
    got = [cards.nth(i).text_content() or "" for i in range(cards.count())]
    assert got and all(name in a for a in got), (name, got, theirs.inner_text("#rag-sources"))
    theirs.close()

    with page.expect_popup() as popup:
        card.locator("a.rag-similar").click()
    alike = popup.value
    alike.wait_for_function(
        turn_done(1), timeout=TIMEOUT_MS
    )
    assert alike.inner_text("#rag-chat [data-testid=user]").startswith(f'Papers similar to "{LEAN}"')
    assert alike.locator("#rag-chat [data-testid=bot]").count() == 1
    assert outside == []
    page.context.close()


TABLE_ROWS = """() => [...document.querySelectorAll('#rag-table tbody tr')]
  .map(tr => [...tr.querySelectorAll('td')].map(td => td.innerText.trim()))
  .filter(cells => cells.length >= 4 && cells[1])"""


def test_every_listed_paper_is_in_a_table_that_sorts_and_filters(server, browser) -> None:
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    frames = _ask(page, LIST_Q, turn=1)
    count = int(re.search(r"(\d+) papers? here meets? this", frames[-1]).group(1))
    page.locator("#rag-table-acc").get_by_text("Every paper that meets the question").first.click()
    page.wait_for_function(f"({TABLE_ROWS})().length === {count}", timeout=30_000)
    rows = page.evaluate(TABLE_ROWS)
    assert [r[0] for r in rows] == [str(i) for i in range(1, count + 1)]  # by relevance
    cards = page.locator("#rag-sources .rag-title")
    assert {r[1] for r in rows} <= {cards.nth(i).inner_text() for i in range(cards.count())}

    page.locator("#rag-table-sort").get_by_text("title", exact=True).click()
    page.wait_for_function(
        f"(() => {{ const t = ({TABLE_ROWS})().map(r => r[1]); return t.length === {count} && "
        "t.every((x, i) => i === 0 || t[i - 1].localeCompare(x, undefined, {sensitivity: 'base'}) <= 0); })()",
        timeout=30_000,
    )
    page.locator("#rag-table-decisions").get_by_text("Poster", exact=True).click()
    posters = sum(1 for r in rows if r[2] == "Poster")
    page.wait_for_function(f"({TABLE_ROWS})().length === {posters}", timeout=30_000)
    assert all(r[2] == "Poster" for r in page.evaluate(TABLE_ROWS))
    assert outside == []
    page.context.close()


def test_ticked_papers_are_compared_in_a_table_that_downloads_as_csv(server, browser, tmp_path: Path) -> None:
    import csv

    from playwright.sync_api import expect

    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, LIST_Q, turn=1)
    boxes = "#rag-compare-pick input[type=checkbox]"
    page.wait_for_function(f"document.querySelectorAll('{boxes}').length >= 2", timeout=30_000)
    titles = [t.inner_text() for t in page.locator("#rag-sources .rag-title").all()]
    page.locator(boxes).nth(0).check()
    page.locator(boxes).nth(1).check()
    page.evaluate(RECORD, 2)
    page.click("#rag-compare")
    page.wait_for_function(turn_done(2), timeout=TIMEOUT_MS)
    _wait_for_user_message(page, 2, "Compare 1 and 2")
    bot = page.locator("#rag-chat [data-testid=bot]").nth(1)
    expect(bot).to_have_text(re.compile(r"^\s*Side by side"), timeout=60_000)
    assert bot.locator("table").count() == 1
    button = page.locator("#rag-compare-csv")
    button.wait_for(state="visible", timeout=30_000)
    with page.expect_download(timeout=30_000) as got:
        button.click()
    assert got.value.suggested_filename == "iclr2025-comparison.csv"
    table = tmp_path / "comparison.csv"
    got.value.save_as(table)
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["title"] for r in rows] == titles[:2]
    assert all(r["problem"] or r["method"] or r["result"] for r in rows)
    assert outside == []
    page.context.close()


def _opens_paper_page(page, link, title: str, force: bool = False) -> None:
    """Clicking `link` opens a new page showing the paper `title` (its page, `/?paper=ID`)."""
    with page.expect_popup() as popup:
        link.click(force=force)
    theirs = popup.value
    theirs.wait_for_function(turn_done(1), timeout=TIMEOUT_MS)
    assert theirs.locator("#rag-chat [data-testid=bot]").first.inner_text().startswith(title)
    theirs.close()


def test_a_papers_page_opens_from_a_link_and_from_its_neighbours(server, browser) -> None:
    outside: list[str] = []
    page = _open(browser, f"{server.url}?paper=Uo4EHT4ZZ8", outside)
    page.wait_for_function(turn_done(1), timeout=TIMEOUT_MS)
    bot = page.locator("#rag-chat [data-testid=bot]").first.inner_text()
    assert bot.startswith(LEAN) and "Nearest papers" in bot
    assert page.locator("#rag-chat [data-testid=user]").first.inner_text() == f'Paper: "{LEAN}"'
    card = page.locator("#rag-src-1-2")  # the first neighbour's card
    card.locator("summary").click()
    neighbour = card.locator(".rag-title").inner_text()
    _opens_paper_page(page, card.locator("a.rag-paper"), neighbour)
    assert outside == []
    page.context.close()


def test_the_map_shows_the_answers_papers_and_a_point_opens_its_page(server, browser) -> None:
    """Open the map after an answer: every paper is a point (its title on hover), the answer's papers
    are in red, and clicking a point opens that paper's page."""
    outside: list[str] = []
    page = _open(browser, server.url, outside)
    _ask(page, Q1, turn=1)
    page.locator("#rag-map-acc").get_by_text("Map of the field").first.click()
    page.click("#rag-map-show")
    point = '#rag-map svg path[aria-roledescription="circle"]'  # Vega's SVG, drawn by gr.Plot
    page.wait_for_selector(point, timeout=60_000)
    stored = int(re.search(r"(\d+) papers", page.locator("#rag-status").inner_text()).group(1))
    assert page.locator(point).count() == stored
    assert page.locator('#rag-map svg text[aria-roledescription="text mark"]').count() >= 1  # cluster labels
    assert "in red" in page.locator("#rag-map-note .rag-map-note").inner_text()
    red = page.locator(f'{point}[fill="{HIGHLIGHT}"]')
    lean = page.locator(f'{point}[aria-label="{LEAN}"]')  # the answer's paper, in red
    assert red.count() >= 1 and lean.get_attribute("fill") == HIGHLIGHT
    lean.hover(force=True)  # hovering shows its title
    page.wait_for_function(f"() => (document.querySelector('#vg-tooltip-element') || {{}}).innerText?.includes({LEAN!r})")
    _opens_paper_page(page, lean, LEAN, force=True)  # a cluster label may lie over its edge
    assert outside == []
    page.context.close()
