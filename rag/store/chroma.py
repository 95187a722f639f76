"""The Chroma collection that holds paper chunks: embedded PersistentClient or a `chroma run` server.

Several processes may use one store (a server answering while `rag ingest` or `rag remove` runs):

* **Change detection**: every write bumps the store's *revision* (embedded: the file `rag-revision`
  in the store directory; server: the collection's metadata key `rag_revision`). `PaperStore.sync()`
  compares (revision, chunk count) with what it saw last; readers call it once per query (a file
  read for the embedded store, see tests/test_store_processes.py for the measured cost).
* **Reopening**: the embedded Chroma client keeps its vector index in memory and does not see
  another process's writes (its metadata reads do). When another process wrote, the one client this
  process holds for that directory (`_Connection`, shared by every PaperStore on it) is closed and
  opened again; the other stores of the process are untouched. Calls in flight finish first.
* **One writer at a time**: writes to an embedded store hold an exclusive lock (filelock) on `rag-write.lock`
  in the store directory (`PaperStore.writing()`); another writer waits `lock_timeout` seconds and
  then fails with `StoreBusyError`. Readers take no lock.
* **The paper table** (rag.store.papertable, a SQLite file beside the store): every write changes it for
  the papers written or removed, in the same lock; readers, `manifest()` and `paper_count()` read it
  instead of scanning the store. A table that is not current (another machine wrote to a server
  store, an older version wrote) is rebuilt once from a scan (`PaperStore.current_table()`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import sqlite3
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence
from urllib.parse import urlparse

from rag.errors import StoreError
from rag.settings import StoreSettings
from rag.store.locks import ProcessLock
from rag.store.papertable import PaperTable, TableStamp
from rag.store.vectors import unit

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process write lock
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

PAGE = 2000
REVISION_FILE = "rag-revision"
LOCK_FILE = "rag-write.lock"
REVISION_KEY = "rag_revision"  # in the collection metadata of a server store
# A dense query asks the index for this many times the chunks it keeps (`PaperStore.nearest_chunks`): the index's
# search is approximate, and asked for just the 250 chunks a question keeps, 19 of 22 writers' questions got a
# different last few than the exact 250 (4 times: 3; 8 times: none), and which differed changed between
# processes. 4.6 → 11.6 ms a dense query on the 2,115 papers (a question runs two).
OVERFETCH = 8


class StoreBusyError(StoreError):
    """Another process (or thread) is writing to the embedded store and did not finish in time."""


@dataclass
class PaperEntry:
    """What the store holds of one paper: its chunk ids and the hashes they were written with."""

    chunk_ids: list[str] = field(default_factory=list)
    hashes: set[str] = field(default_factory=set)
    expected_chunks: int = 0

    def is_complete(self, content_hash: str) -> bool:
        return self.hashes == {content_hash} and len(self.chunk_ids) == self.expected_chunks


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _writable(path: Path) -> bool:
    """Whether this process may write in `path` (os.access also reports a read-only mount to root)."""
    db = path / "chroma.sqlite3"
    return os.access(path, os.W_OK) and (not db.exists() or os.access(db, os.W_OK))


def open_client(cfg: StoreSettings) -> Any:
    """A Chroma client for the configured location (telemetry off)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if cfg.chroma_url:
            url = urlparse(cfg.chroma_url)
            if not url.hostname:
                raise StoreError(f"RAG_STORE__CHROMA_URL is not a URL: {cfg.chroma_url!r}")
            client = chromadb.HttpClient(
                host=url.hostname,
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
            client.heartbeat()
            return client
        cfg.path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(cfg.path), settings=chroma_settings)
    except StoreError:
        raise
    except Exception as exc:  # chromadb raises many types for an unreachable or broken store
        where = cfg.chroma_url or str(cfg.path)
        if not cfg.chroma_url and cfg.path.is_dir() and not _writable(cfg.path):
            raise StoreError(
                f"the store at {where} is read-only, and Chroma must write to a store even to read it "
                f"({_one_line(exc)}); make the directory writable or copy it somewhere writable"
            ) from exc
        raise StoreError(f"cannot open the Chroma store at {where}: {_one_line(exc)}") from exc


def next_revision(previous: str | None) -> str:
    """'<n + 1>.<random>': a counter for people, and a random part so that two writes never leave
    the same revision (a store server has no write lock: two writers may both count to n + 1)."""
    head = (previous or "").split(".", 1)[0]
    return f"{int(head) + 1 if head.isdigit() else 1}.{secrets.token_hex(4)}"


def _user_metadata(meta: dict[str, Any] | None) -> dict[str, Any]:
    """Collection metadata that `modify` accepts (Chroma refuses a restated distance function; the
    collection keeps it in its configuration)."""
    return {k: v for k, v in (meta or {}).items() if not k.startswith("hnsw:")}


class _ReadWriteLock:
    """Chroma calls run together (shared); a reopen (exclusive) waits for the calls in flight and
    holds new ones back until the new client is in place."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._closing = False
        self._mine = threading.local()

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        if depth == 0:  # a thread already inside a call goes on (it would wait for itself)
            with self._cond:
                while self._closing:
                    self._cond.wait()
                self._active += 1
        self._mine.depth = depth + 1
        try:
            yield
        finally:
            self._mine.depth = depth
            if depth == 0:
                with self._cond:
                    self._active -= 1
                    if self._active == 0:
                        self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[bool]:
        """Yields False (and does not wait) when this thread is itself inside a call."""
        if getattr(self._mine, "depth", 0):
            yield False
            return
        with self._cond:
            while self._closing:
                self._cond.wait()
            self._closing = True
            while self._active:
                self._cond.wait()
        try:
            yield True
        finally:
            with self._cond:
                self._closing = False
                self._cond.notify_all()


class _Connection:
    """This process's one Chroma client for a store location, shared by every PaperStore on it, its
    revision bookkeeping and (embedded) the inter-process write lock."""

    def __init__(self, cfg: StoreSettings):
        self.cfg = cfg
        self.embedded = not cfg.chroma_url
        self.path = Path(cfg.path)
        self.calls = _ReadWriteLock()
        # The revision the client is known to be current with; read before opening, so a write
        # landing in between makes the next sync reopen rather than go unseen.
        self.fresh = self.read_revision() if self.embedded and self.path.is_dir() else ""
        self.client = open_client(cfg)
        self.generation = 0  # reopens so far; a PaperStore fetches its collection again after one
        self.writes = 0  # revisions this process wrote
        self._writer = ProcessLock(self.path / LOCK_FILE)

    # -- revision (embedded store) ------------------------------------------------------------
    def read_revision(self) -> str:
        try:
            fd = os.open(self.path / REVISION_FILE, os.O_RDONLY)
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise StoreError(f"cannot read {self.path / REVISION_FILE}: {exc.strerror}") from exc
        try:
            return os.read(fd, 64).decode("ascii", "replace").strip()
        finally:
            os.close(fd)

    def write_revision(self) -> None:
        """Record that the store changed (under the write lock): a new file replaces the old one."""
        new = next_revision(self.read_revision())
        before, self.fresh = self.fresh, new  # before the file: this process's readers need no reopen
        tmp = self.path / f"{REVISION_FILE}.{os.getpid()}.tmp"
        try:
            tmp.write_text(new + "\n", encoding="ascii")
            os.replace(tmp, self.path / REVISION_FILE)
        except OSError as exc:
            self.fresh = before
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(
                f"cannot record a write in the store at {self.path}: {exc.strerror} (is the disk full?)"
            ) from exc
        self.writes += 1

    def refresh(self) -> None:
        """Reopen the client when another process wrote since it was opened (embedded store)."""
        if self.embedded:
            generation = self.generation
            revision = self.read_revision()
            if revision != self.fresh:
                self.reopen(generation, revision)

    def reopen(self, generation: int, revision: str) -> None:
        """Close the client and open it again, so its vector index is read anew from disk. Only this
        location's client is replaced; calls in flight finish on the old one first."""
        with self.calls.exclusive() as ok:
            if not ok or self.generation != generation:
                return  # inside a call of this thread (the next sync reopens), or reopened meanwhile
            old = self.client
            with contextlib.suppress(Exception):
                old.close()  # stops Chroma's System for this path once no client holds it
            self.client = open_client(self.cfg)
            if getattr(self.client, "_server", None) is getattr(old, "_server", object()):
                logger.warning(
                    "another Chroma client in this process holds %s open, so its vector index cannot "
                    "be reloaded: queries may miss other processes' writes until a restart", self.path
                )
            self.generation += 1
            self.fresh = revision
            logger.info("the store at %s changed in another process: reopened it", self.path)

    # -- the write lock (embedded store) --------------------------------------------------------
    @contextlib.contextmanager
    def write_lock(self, timeout: float) -> Iterator[bool]:
        """Hold the store's write lock (reentrant); yields whether this is the outermost hold."""
        if not self.embedded:  # a Chroma server orders writes itself
            yield True
            return

        def waiting(holder: str) -> None:
            logger.info("another process (pid %s) is writing to %s: waiting up to %gs", holder, self.path, timeout)

        def busy(holder: str) -> Exception:
            return StoreBusyError(self._busy(holder, timeout))

        with contextlib.ExitStack() as held:
            try:
                outermost = held.enter_context(self._writer.hold(timeout, waiting, busy))
            except OSError as exc:
                raise StoreError(
                    f"cannot write to the store at {self.path}: {exc.strerror} (creating {LOCK_FILE}); "
                    "a write needs a writable store directory"
                ) from exc
            yield outermost

    def _busy(self, holder: str, timeout: float) -> str:
        if holder == str(os.getpid()):
            holder = f"{holder}, another thread of this process"
        return (f"store busy: another process (pid {holder}) is writing to {self.path}; try again when it "
                f"finishes (waited {timeout:g}s, RAG_STORE__LOCK_TIMEOUT)")


_CONNECTIONS: dict[str, _Connection] = {}
_TABLES: dict[Path, PaperTable] = {}
_CONNECTIONS_LOCK = threading.Lock()


def _connection(cfg: StoreSettings) -> _Connection:
    key = cfg.chroma_url or str(Path(cfg.path).resolve())
    with _CONNECTIONS_LOCK:
        conn = _CONNECTIONS.get(key)
        if conn is None:
            conn = _CONNECTIONS[key] = _Connection(cfg)
        return conn


def paper_table_path(cfg: StoreSettings, collection: str) -> Path:
    """Where a collection's paper table lives: in an embedded store's directory; for a server store,
    locally under `paper_table_dir` (default: $XDG_CACHE_HOME/iclr-rag/paper-tables/<host>_<port>,
    ~/.cache/...: a table is rebuilt from one scan when missing, so it is a cache; nothing is written
    to the embedded store's path)."""
    if not cfg.chroma_url:
        return Path(cfg.path) / f"rag-papers.{collection}.sqlite3"
    url = urlparse(cfg.chroma_url)
    server = re.sub(r"[^\w.-]", "_", f"{url.hostname}_{url.port or (443 if url.scheme == 'https' else 8000)}")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "iclr-rag" / "paper-tables"
    base = Path(cfg.paper_table_dir) if cfg.paper_table_dir else cache
    return base / server / f"{collection}.sqlite3"


def sentence_vectors_path(cfg: StoreSettings, collection: str) -> Path:
    """Where the store's sentence vectors (rag.store.sentence_vectors) live: beside its paper tables, one file
    for all its collections (rows are keyed by model and text, so `rag adapt`'s sibling collection
    writes where the store it replaces reads)."""
    return paper_table_path(cfg, collection).parent / "rag-sentences.sqlite3"


def chunk_paper_id(chunk_id: str) -> str:
    """Chunk ids are "<paper id>#<content hash>#<index>" (rag.ingest)."""
    return chunk_id.rsplit("#", 2)[0]


@dataclass(frozen=True)
class ModelRecord:
    """Which embedding model wrote a collection's vectors (kept in the collection's metadata).

    `name` is "bundled", or "adapted" for a model `rag adapt` trained for this store (kept in
    `<store path>/models/<fingerprint>`), or the path of a model the user configured."""

    name: str
    fingerprint: str


class Stamp(NamedTuple):
    """What a reader compares to notice a change of the store, in any process."""

    revision: str  # bumped by every write (see the module docstring)
    chunks: int


class PaperStore:
    """Paper-level operations over one Chroma collection of chunks."""

    def __init__(self, cfg: StoreSettings, collection: str | None = None):
        self.cfg = cfg
        self.name = collection or cfg.collection
        self._conn = _connection(cfg)
        self._collection: Any = None
        self._generation = -1
        self._seen: Stamp | None = None
        self._seen_writes = 0
        self._sync_lock = threading.Lock()
        self._table: PaperTable | None = None
        with self._conn.calls.shared():
            self._fetch()

    # -- the client and collection ----------------------------------------------------------------
    @property
    def client(self) -> Any:
        return self._conn.client

    @property
    def sentence_vectors_path(self) -> Path:
        return sentence_vectors_path(self.cfg, self.name)

    @property
    def field_map_path(self) -> Path:
        """Where the map of the field (rag.fieldmap) is kept: beside the paper table."""
        table = paper_table_path(self.cfg, self.name)
        return table.with_name(f"{table.stem}.fieldmap.json")

    @property
    def collection(self) -> Any:
        """The Chroma collection (fetched again after the client was reopened)."""
        if self._generation != self._conn.generation:
            self._fetch()
        return self._collection

    def _fetch(self) -> None:
        generation = self._conn.generation
        self._collection = self._conn.client.get_or_create_collection(self.name, metadata={"hnsw:space": "cosine"})
        self._generation = generation

    def sync(self) -> Stamp:
        """The store's stamp now. When another process wrote since this process last looked, the
        embedded client is reopened first (its vector index would not show the write) and the
        collection fetched again (`rag adapt` replaces it), so the next reads see the store as it is.

        Cost: one small file read plus the chunk count for an embedded store; for a Chroma server,
        fetching the collection (its metadata holds the revision; ~10 ms), and the count only when
        the revision changed."""
        with self._sync_lock:
            conn = self._conn
            seen = self._seen
            writes, generation = conn.writes, conn.generation
            if conn.embedded:
                revision = conn.read_revision()
                if revision != conn.fresh:
                    conn.reopen(generation, revision)  # the collection is fetched again after it
                elif seen is not None and revision != seen.revision:
                    with conn.calls.shared():
                        self._fetch()  # written by this process, maybe through another PaperStore
            else:
                with conn.calls.shared():
                    self._fetch()
                revision = str((self._collection.metadata or {}).get(REVISION_KEY, ""))
                if seen is not None and revision and revision == seen.revision:
                    # A server store's writers bump the revision before and after they write, so an
                    # unchanged revision means unchanged chunks: no count (~70 ms at 475,000 chunks).
                    return seen
            stamp = Stamp(revision, self.count_chunks())
            if stamp == seen:
                return stamp
            if (conn.embedded and seen is not None and seen.revision == revision
                    and writes == self._seen_writes == conn.writes and conn.generation == generation):
                # Chunks came or went with no new revision, and not from this process: a writer that
                # did not record its write (killed in between). Its vectors may be missing too.
                conn.reopen(generation, revision)
                stamp = Stamp(revision, self.count_chunks())
            self._seen, self._seen_writes = stamp, conn.writes
            return stamp

    # -- writing ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the store's write lock for a batch of writes (reentrant; every write takes it too).

        Embedded store: an exclusive lock on `rag-write.lock` in the store directory; another writer
        (any process) waits up to `lock_timeout` seconds, then gets StoreBusyError. On the outermost
        entry the client is reopened if another process wrote since, and the collection fetched
        again, so the batch writes over the store as it is now."""
        with self._conn.write_lock(self.cfg.lock_timeout) as outermost:
            if outermost:
                self._conn.refresh()
                with self._conn.calls.shared():
                    self._fetch()
            yield

    def _write(self, what: str, call: Any, bump: bool = True) -> Any:
        """Run one Chroma write under the write lock; record a new revision (also after a failure:
        part of it may be in). Chroma's errors become one-line StoreErrors."""
        with self.writing():
            if bump and not self._conn.embedded:
                # Also before: a writer killed mid-write leaves a new revision, so readers, which
                # skip the chunk count while the revision is unchanged (`sync`), still notice.
                self._bump()
            try:
                with self._conn.calls.shared():
                    result = call(self.collection)
            except Exception as exc:
                if bump:
                    with contextlib.suppress(Exception):
                        self._bump()
                if isinstance(exc, StoreError):
                    raise
                raise StoreError(
                    f"cannot write to the store at {self.location} ({what}): {_one_line(exc)}; is the disk "
                    "full or the store read-only? What the store held before this write is unchanged"
                ) from exc
            if bump:
                self._bump()
            return result

    # -- the paper table --------------------------------------------------------------------------
    @property
    def table(self) -> PaperTable:
        """This collection's paper table as it is (see `current_table` for one matching the store);
        one object per file in a process, shared like the Chroma client."""
        if self._table is None:
            path = paper_table_path(self.cfg, self.name).resolve()
            with _CONNECTIONS_LOCK:
                table = _TABLES.get(path)
                if table is None or not path.exists():
                    table = _TABLES[path] = PaperTable(path)
            self._table = table
        return self._table

    def _table_stamp(self, stamp: Stamp | None = None) -> TableStamp:
        """The store's stamp now, as a paper table records it (the collection's id included: a
        collection created again under the same name is another store)."""
        if stamp is None:
            with self._conn.calls.shared():
                if not self._conn.embedded:
                    self._fetch()  # a server store keeps its revision in the collection's metadata
                collection = self.collection
                if self._conn.embedded:
                    revision = self._conn.read_revision()
                else:
                    revision = str((collection.metadata or {}).get(REVISION_KEY, ""))
                return TableStamp(str(collection.id), revision, int(collection.count()))
        return TableStamp(str(self.collection.id), stamp.revision, stamp.chunks)

    def current_table(self) -> PaperTable:
        """The paper table, matching the store as it is now: when it does not (missing, written by an
        older version, or the store changed where this table could not see it), it is rebuilt from
        one scan of the store, once, whichever process gets there first."""
        table = self.table
        if table.stamp() == self._table_stamp(self.sync()):
            return table
        with table.locked("rebuilding it"):  # a writer's change commits first
            self._refresh_table(table)
        return table

    def _refresh_table(self, table: PaperTable) -> None:
        """Under the table's lock: rebuild it unless it matches the store (a writer may just have
        committed what a reader missed)."""
        want = self._table_stamp(self.sync())
        have = table.stamp()
        if have == want:
            return
        logger.info("the paper table of %s is not current (%s, store: %s): rebuilding it from a scan",
                    self.location, "missing" if have.chunks < 0 else "stale", want.revision or "-")
        table.rebuild(self.iter_records(["metadatas", "documents"]), want)

    def _table_write(self, what: str, call: Any, update: Any) -> Any:
        """A Chroma write and the same change to the paper table, in the table's lock: the table is
        made current first (rebuilt if it was not), then stamped with the store's new revision. A
        failed Chroma write leaves the table as it was and stale (readers rebuild it)."""
        table = self.table
        with self.writing(), table.locked(what):
            self._refresh_table(table)
            result = self._write(what, call)
            try:
                update(table, self._table_stamp())
            except sqlite3.Error as exc:  # rolled back: the table stays stale and is rebuilt once
                raise StoreError(
                    f"wrote to the store at {self.location} but not to its paper table {table.path} ({what}): "
                    f"{_one_line(exc)}; is the disk full? The table is rebuilt from the store when read"
                ) from exc
        return result

    def _bump(self) -> None:
        if self._conn.embedded:
            self._conn.write_revision()
            return
        with self._conn.calls.shared():
            current = self._conn.client.get_collection(self.name)
            meta = _user_metadata(current.metadata)
            meta[REVISION_KEY] = next_revision(str(meta.get(REVISION_KEY, "")))
            current.modify(metadata=meta)
            self._collection, self._generation = current, self._conn.generation
        self._conn.writes += 1

    @property
    def models_dir(self) -> Path:
        """Where models adapted for this store live (next to an embedded store; locally for a server)."""
        return Path(self.cfg.path) / "models"

    def model_record(self) -> ModelRecord | None:
        with self._conn.calls.shared():
            meta = self.collection.metadata or {}
        if "embedding_fingerprint" not in meta:
            return None
        return ModelRecord(str(meta.get("embedding_model", "")), str(meta["embedding_fingerprint"]))

    def set_model_record(self, record: ModelRecord) -> None:
        def modify(collection: Any) -> None:
            meta = _user_metadata(self._conn.client.get_collection(self.name).metadata)
            meta.update(embedding_model=record.name, embedding_fingerprint=record.fingerprint)
            collection.modify(metadata=meta)

        table = self.table
        with self.writing(), table.locked("recording the embedding model"):
            current = table.stamp() == self._table_stamp()
            self._write("recording the embedding model", modify)
            if current:  # no paper moved: the table stays current
                table.mark(self._table_stamp())

    def replace_with(self, other: PaperStore) -> None:
        """Make `other` (a fully written sibling collection) this store's collection, under this name.

        The old collection steps aside under another name and is dropped only once the new one has
        taken the name: at every moment one complete collection exists."""
        aside = f"{self.name}-previous"

        def swap(collection: Any) -> Any:
            client = self._conn.client
            if aside in {c.name for c in client.list_collections()}:
                client.delete_collection(aside)  # left by an earlier interrupted swap
            collection.modify(name=aside)
            try:
                other.collection.modify(name=self.name)
            except Exception:
                collection.modify(name=self.name)  # put the old one back
                raise
            client.delete_collection(aside)
            return client.get_collection(self.name)

        with self.writing():
            new = self._write("replacing the collection", swap)
            self._collection = other._collection = new
            other.table.remove_file()  # this store's table is rebuilt once, for the new collection
            other._table = None
            other.name = self.name

    def drop(self) -> None:
        # A server store's revision lives in the collection itself: nothing to bump once it is gone.
        self._write("dropping a collection", lambda _: self._conn.client.delete_collection(self.name),
                    bump=self._conn.embedded)
        self.table.remove_file()
        self._table = None

    @property
    def location(self) -> str:
        return self.cfg.chroma_url or str(self.cfg.path)

    def iter_records(self, include: list[str]) -> Iterator[tuple[str, dict[str, Any], str | None]]:
        """Every chunk as (id, metadata, document), paged so memory stays flat."""
        offset = 0
        while True:
            with self._conn.calls.shared():
                page = self.collection.get(include=include, limit=PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            metas = page.get("metadatas") or [{}] * len(ids)
            docs = page.get("documents") or [None] * len(ids)
            yield from zip(ids, metas, docs)
            offset += len(ids)

    def manifest(self) -> dict[str, PaperEntry]:
        """paper id → its chunks in the store, to decide what an ingest must (re)write (read from the
        paper table: no scan of the store)."""
        out: dict[str, PaperEntry] = defaultdict(PaperEntry)
        for cid, pid, content_hash, n_chunks in self.current_table().chunk_rows():
            entry = out[pid]
            entry.chunk_ids.append(cid)
            entry.hashes.add(str(content_hash))
            entry.expected_chunks = int(n_chunks or 0)
        return dict(out)

    def write(
        self, ids: list[str], embeddings: list[list[float]], metadatas: list[dict[str, Any]], documents: list[str]
    ) -> None:
        """Upsert one batch of whole papers in a single Chroma call (and into the paper table)."""
        chunks = list(zip(ids, metadatas, documents))
        self._table_write("writing chunks",
                          lambda c: c.upsert(ids=ids, embeddings=embeddings, metadatas=metadatas, documents=documents),
                          lambda table, stamp: table.write(chunks, stamp))

    def delete_chunks(self, ids: list[str]) -> None:
        if ids:
            self._table_write("deleting chunks", lambda c: c.delete(ids=ids),
                              lambda table, stamp: table.delete_chunks(ids, stamp))

    def remove_paper(self, paper_id: str) -> int:
        """Delete every chunk of a paper; returns how many were deleted."""
        with self.writing():
            with self._conn.calls.shared():
                found = self.collection.get(where={"paper_id": paper_id}, include=[])
            self.delete_chunks(found["ids"])
        return len(found["ids"])

    def nearest_chunks(
        self, vector: Iterable[float], n: int, decisions: Sequence[str] | None = None, total: int | None = None
    ) -> list[tuple[str, float]]:
        """(paper id, cosine) of the n chunks nearest to a unit vector, best first.

        Only distances are fetched (the paper id is the chunk id's prefix): reading metadata and
        documents for hundreds of chunks would cost five times the search itself."""
        count = self.count_chunks() if total is None else total
        n = min(n, count)
        if n <= 0:
            return []
        where: dict[str, Any] | None = None
        if decisions:
            where = {"decision": decisions[0]} if len(decisions) == 1 else {"decision": {"$in": list(decisions)}}
        with self._conn.calls.shared():
            # (the index's search is approximate: asked for just n, the last few of them differed from the
            # exact ones and between processes, and with them what an answer lists)
            found = self.collection.query(
                query_embeddings=[list(map(float, vector))], n_results=min(count, n * OVERFETCH),
                include=["distances"], where=where,
            )
        ids, dists = found["ids"][0], found["distances"][0]
        ranked = sorted(zip(ids, dists), key=lambda x: (float(x[1]), x[0]))[:n]
        return [(chunk_paper_id(cid), 1.0 - float(d)) for cid, d in ranked]

    def paper_vectors(self, paper_ids: Sequence[str]) -> dict[str, Any]:
        """paper id → the unit mean of its abstract-window vectors (all its vectors for older stores)."""
        import numpy as np

        ids = [p for p in dict.fromkeys(paper_ids) if p]
        if not ids:
            return {}
        # The paper table (kept current with the store by every write) names their chunks.
        chunk_ids = self.table.chunk_ids(ids)
        with self._conn.calls.shared():
            if chunk_ids:  # by id: ~20 ms on a server holding 475,000 chunks, against ~80 by metadata
                found = self.collection.get(ids=chunk_ids, include=["embeddings", "metadatas"])
            else:
                where: dict[str, Any] = {"paper_id": ids[0]} if len(ids) == 1 else {"paper_id": {"$in": ids}}
                found = self.collection.get(where=where, include=["embeddings", "metadatas"])
        rows: dict[str, list[Any]] = defaultdict(list)
        windows: dict[str, list[Any]] = defaultdict(list)
        for meta, vec in zip(found["metadatas"] or [], found["embeddings"] if found["embeddings"] is not None else []):
            pid = str(meta.get("paper_id"))
            rows[pid].append(vec)
            if meta.get("kind") == "window":
                windows[pid].append(vec)
        out = {}
        for pid, vecs in rows.items():
            mean = np.mean(np.asarray(windows.get(pid) or vecs, dtype=np.float32), axis=0)
            out[pid] = unit(mean)
        return out

    def count_chunks(self) -> int:
        with self._conn.calls.shared():
            return int(self.collection.count())

    def paper_count(self) -> int:
        """Papers in the store, from the paper table (current with the store: a file read, a chunk
        count and a SQLite count)."""
        return self.current_table().count()

    def paper_ids(self) -> set[str]:
        return set(self.current_table().paper_ids())
