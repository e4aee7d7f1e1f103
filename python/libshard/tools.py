"""Converting, verifying, inspecting and reporting from Python: ``libshard.convert``, ``libshard.verify``,
``libshard.inspect``, ``libshard.report``.

Each does what the ``shard`` subcommand of the same name does, in-process, as the library's typed call: ``verify``
and ``inspect`` return their results as data (the same as ``shard verify --json`` / ``shard inspect --json``
print), ``report`` the page's path, and ``convert`` takes options that are the program's flags (one table in the
library serves both) and mean the same: a keyword argument is the flag's name without ``--`` and with ``-`` turned
into ``_`` (``shard_size="64MiB"`` is ``--shard-size 64MiB``; ``no_shuffle=True`` is ``--no-shuffle``), a bad value
is a ``ValueError`` with the message ``shard`` prints, and the output is the program's, byte for byte.
docs/reader.md, "Converting and verifying from Python", has examples.
"""
import json
import os
import sys
import warnings
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _libshard

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# `shard convert` flags that only shape what the program prints; libshard.convert returns its results instead.
_DISPLAY_FLAGS = {"dry_run", "json", "quiet", "verbose", "progress_interval", "help"}


class ConvertProgress(NamedTuple):
    """Progress of a running ``libshard.convert``, handed to its ``progress=`` callback."""

    done: int  #: samples finished by this run (written or rejected)
    total: int  #: samples this run has to do
    rejected: int  #: of ``done``, rejected
    bytes_read: int  #: source bytes read
    bytes_written: int  #: shard bytes written
    shards_done: int  #: shards this run finished
    shards_total: int  #: shards this run writes (shards kept from an earlier run excluded)
    #: non-zero in one last call: the leak check's search starts, over this many images
    leak_check_images: int = 0


class SplitLayout(NamedTuple):
    """One split of the input as ``libshard.convert`` found it."""

    name: str  #: the split ("train", "val", ...)
    folder: str  #: the top-level folder it was read from when that is not its name ("Training"), else ""
    samples: int  #: inputs listed for it (rejects included)
    classes: int  #: distinct labels among them (0: unlabeled)


class ConvertLayout(NamedTuple):
    """The layout ``libshard.convert`` found in its input (the program's "layout ..." line, as data)."""

    kind: str  #: "split/class", "class", "flat" or "csv"
    splits: List[SplitLayout]  #: per split, by name
    text: str  #: the line ``shard convert`` prints


class ConvertResult(NamedTuple):
    """What ``libshard.convert`` did (the program's summary line, as data)."""

    converted: int  #: samples converted by this run
    kept: int  #: samples kept from an earlier run (in reused shards)
    rejected: int  #: rejected inputs, those of reused shards included
    passed_through: int  #: JPEGs copied byte for byte (of all converted)
    shards_written: int  #: shards this run wrote
    shards_reused: int  #: complete shards kept from an earlier run
    output: str  #: the output folder
    manifest_path: str  #: the manifest written (a task's partial manifest for one task of a split run)
    manifest: Dict[str, Any]  #: that manifest, parsed (what ``shard convert --json`` prints)
    rejects: List[Tuple[str, str]]  #: (path, reason) of every reject, as in rejects.tsv
    removed_stale: List[str]  #: shards of an earlier plan removed from the folder
    warnings: List[str]  #: the listing's warnings (each also issued once as a Python ``UserWarning``)
    layout: ConvertLayout  #: the layout found: kind, and per split its samples and classes
    redone_damaged: List[str]  #: shards of an earlier run whose bytes no longer matched their entry: redone

    @property
    def shards(self) -> List[str]:
        """Paths of the shards the manifest lists, in manifest order."""
        folder = os.path.dirname(self.manifest_path)
        return [os.path.join(folder, s["file"]) for split in self.manifest.get("splits", [])
                for s in split.get("shards", [])]


def _flag_table() -> Dict[str, Tuple[str, bool, bool, bool]]:
    """The flags of ``shard convert`` by keyword: (name, takes_value, positional, repeatable), from the library's
    table (libshard/remote/convert_flags.h) that the program registers its options from."""
    table = {}
    for name, takes_value, positional, repeatable in _libshard._convert_flags():
        table[name.replace("-", "_")] = (name, takes_value, positional, repeatable)
    return table


def _flag_value(value: Any) -> str:
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        return os.fsdecode(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (tuple, list)):  # size=(224, 160) -> "224x160", fill=(0, 0, 0) -> "0,0,0"
        raise TypeError("a sequence is not a flag value; write it as the flag's text (e.g. size=\"224x160\")")
    return str(value)


def _convert_options(input: PathLike, output: PathLike, **options: Any) -> List[Tuple[str, str]]:
    """``convert(input, output, **options)`` as (flag name, text) pairs, in the order given: what ``_convert`` sets
    through the library's table of ``shard convert``'s flags (a switch's text is "true")."""
    table = _flag_table()
    pairs = [("input", _flag_value(input)), ("output", _flag_value(output))]
    for key, value in options.items():
        if key in _DISPLAY_FLAGS:
            raise TypeError("convert() does not take %s=: it returns its results (a ConvertResult) and reports "
                            "progress through progress=" % key)
        entry = table.get(key)
        if entry is None or entry[2] or key == "output":
            raise TypeError("convert() got an unexpected keyword argument %r (the options are the flags of "
                            "`shard convert`, '-' written '_')" % key)
        name, takes_value, _, repeatable = entry
        if value is None or value is False and not takes_value:
            continue
        if not takes_value:
            if value is not True:
                raise TypeError("convert(): %s= is a flag: True or False, not %r" % (key, value))
            pairs.append((name, "true"))
        else:
            if isinstance(value, bool):
                raise TypeError("convert(): %s= takes a value, not %r" % (key, value))
            # A repeatable flag takes a list: feature=["tags:int_list", "score:float"].
            for v in value if repeatable and isinstance(value, (list, tuple)) else [value]:
                pairs.append((name, _flag_value(v)))
    return pairs


def convert_args(input: PathLike, output: PathLike, **options: Any) -> List[str]:
    """The ``shard convert`` arguments that ``convert(input, output, **options)`` runs (for logs, or to hand
    the same conversion to a cluster job)."""
    table = _flag_table()
    args = []
    for name, text in _convert_options(input, output, **options):
        _, takes_value, positional, _ = table[name.replace("-", "_")]
        args += [text] if positional else ["--" + name, text] if takes_value else ["--" + name]
    return args


def _tqdm_bar(force: bool = False):
    """A tqdm bar on stderr when tqdm is installed and stderr is a terminal (or ``force``), else None."""
    try:
        if not force and not sys.stderr.isatty():
            return None
        from tqdm import tqdm  # type: ignore
    except ImportError:
        if force:
            raise
        return None
    return tqdm(desc="shard convert", unit="img", file=sys.stderr)


def convert(input: PathLike, output: PathLike, *, progress: Optional[Callable[[ConvertProgress], Any]] = None,
            bar: Optional[bool] = None, **options: Any) -> ConvertResult:
    """Converts ``input`` (an image folder or CSV manifest) to shards in the folder ``output``, as
    ``shard convert INPUT -o OUTPUT [flags]``.

    ``options`` are the flags of ``shard convert`` (``shard convert --help``), ``-`` written ``_``: values as
    the flag's text or a number (``size=224``, ``shard_size="64MiB"``, ``labels="labels.txt"``), a list for a
    repeatable flag (``feature=["tags:int_list", "score:float"]``, ``include=[...]``), flags as ``True``
    (``no_shuffle=True``, ``no_sync=True``). The shards, indices, rejects.tsv and manifest.json are
    byte-identical to the program's with the same flags. ``progress``, when given, is called on the calling
    thread with a :class:`ConvertProgress` at most every 100 ms while the conversion runs (without the GIL, on
    threads of its own); ``bar`` draws a tqdm bar on stderr (default: when tqdm is installed and stderr is a
    terminal). A rerun resumes, as the program's does.

    Raises ValueError (a bad option or unreadable input, with the program's message; nothing written), TypeError
    (an unknown keyword), KeyboardInterrupt (Ctrl-C, or one raised by ``progress``: the run stops, the folder is
    left as a killed ``shard convert`` leaves it, ready to resume), RuntimeError / OSError (a failure while
    converting, e.g. ``on_error="fail"`` and a bad input, or a full disk).
    """
    flags = _convert_options(input, output, **options)
    tq = _tqdm_bar() if bar is None else (_tqdm_bar(force=True) if bar else None)

    def on_progress(p: Dict[str, int]) -> None:
        info = ConvertProgress(**p)
        if tq is not None:
            tq.total = info.total
            tq.n = info.done
            tq.set_postfix(rejected=info.rejected, refresh=False)
            tq.refresh()
        if progress is not None:
            progress(info)

    try:
        # Texts as their bytes (a path that is not UTF-8 is a surrogate-escaped str: os.fsencode's way).
        texts = [(n, t.encode("utf-8", "surrogateescape")) for n, t in flags]
        r = _libshard._convert(texts, on_progress if (progress is not None or tq is not None) else None)
    finally:
        if tq is not None:
            tq.close()
    manifest = json.loads(r.pop("manifest_json"))
    kind, splits, text = r.pop("layout")
    for w in r["warnings"]:
        warnings.warn("libshard.convert: " + w, UserWarning, stacklevel=2)
    return ConvertResult(manifest=manifest, rejects=[tuple(x) for x in r.pop("rejects")],
                         layout=ConvertLayout(kind, [SplitLayout(*x) for x in splits], text), **r)


class Fault(NamedTuple):
    """One fault of ``libshard.verify``: a record-level fault has an ``offset`` and a ``record``; a set-level one
    (a manifest check: a missing shard, a record count or checksum that differs) has ``None`` for both."""

    file: str  #: the file (a shard, an index's shard, or a manifest)
    offset: Optional[int]  #: byte where the faulty record starts (of the uncompressed stream)
    record: Optional[int]  #: its number, from 0
    kind: str  #: the stable kind name (docs/verify.md, "Fault kinds"), e.g. "data_crc_mismatch"
    message: str  #: what is wrong


class VerifyReport:
    """The result of ``libshard.verify``: ``ok``, the ``faults`` as a flat list, and ``json``, the whole document
    ``shard verify --json`` prints (``files``, ``manifests``, ``summary``, ``no_manifest``, ``sets``)."""

    def __init__(self, doc: Dict[str, Any], exit_code: int) -> None:
        self.json = doc
        self.exit_code = exit_code
        faults = []
        for f in doc["files"]:
            faults += [Fault(f["path"], x["offset"], x["record"], x["kind"], x["message"]) for x in f["faults"]]
        for m in doc["manifests"]:
            faults += [Fault(x["path"], None, None, x["kind"], x["message"]) for x in m["faults"]]
        faults += [Fault(x["path"], None, None, x["kind"], x["message"]) for x in doc["sets"]]
        self.faults: List[Fault] = faults

    @property
    def ok(self) -> bool:
        """True when no fault was found (the program's exit status 0)."""
        return self.exit_code == 0

    @property
    def files(self) -> List[Dict[str, Any]]:
        """Per file: path, compression, records, bytes, unchecked_bytes, faults_omitted, faults."""
        return self.json["files"]

    @property
    def summary(self) -> Dict[str, Any]:
        """files, files_with_faults, records, bytes, unchecked_bytes, faults, seconds, mb_per_s."""
        return self.json["summary"]

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        s = self.summary
        return "<VerifyReport ok=%s: %d files, %d records, %d faults>" % (self.ok, s["files"], s["records"],
                                                                        s["faults"])


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        return [os.fsdecode(paths)]
    return [os.fsdecode(p) for p in paths]


def _lone_mixture(paths: List[str]) -> Optional[str]:
    """The mixture file that ``paths`` names alone (a mixture.json, or a folder holding one and no
    manifest.json), as ``shard verify`` finds it, or None."""
    if len(paths) != 1 or "://" in paths[0]:
        return None
    path = paths[0]
    if os.path.isdir(path) and not os.path.exists(os.path.join(path, "manifest.json")):
        path = os.path.join(path, "mixture.json")
    if not path.endswith(".json") or not os.path.isfile(path):
        return None
    return path if _libshard._is_mixture_file(os.fsencode(path)) else None


def verify(paths: Union[PathLike, Iterable[PathLike]] = (), decode: bool = False,
           manifest: Optional[PathLike] = None, threads: int = 0, *, no_manifest: bool = False,
           records_only: bool = False, no_index: bool = False, allow_empty: bool = False,
           compression: str = "auto", max_pixels: Optional[int] = None,
           max_record_length: Optional[int] = None) -> VerifyReport:
    """Checks shards as ``shard verify --json PATHS`` (docs/verify.md): framing, CRCs, Examples, indices, a
    manifest.json (given, or found in a folder argument), and with ``decode=True`` every image. Returns a
    :class:`VerifyReport` (faults are data, not exceptions); raises ValueError for a usage error (nothing to
    check, a bad option), with the program's message.

    paths: files, folders (searched for shards; their manifest.json is used) or glob patterns.
    decode: decode every image, raw array and mask (``--decode``).
    manifest: a manifest.json to check the set against (``--manifest``).
    threads: files checked at once; 0 is one per core (``--threads``).
    no_manifest, records_only, no_index, allow_empty, compression, max_pixels, max_record_length: the flags of
    the same names (``shard verify --help``).
    """
    named = _paths(paths)
    mixture = _lone_mixture(named) if manifest is None else None
    if mixture is not None:
        raise ValueError("shard verify: %s: --json takes one dataset; verify the mixture's sources one by one"
                         % mixture)
    doc, code = _libshard._verify([os.fsencode(p) for p in named], b"" if manifest is None else os.fsencode(manifest),
                                  no_manifest, decode, records_only, no_index, allow_empty, compression, threads,
                                  max_pixels, max_record_length)
    return VerifyReport(json.loads(doc), code)


class Inspection(NamedTuple):
    """What ``libshard.inspect`` found in one file (``shard inspect --json``), and its first records as dicts."""

    file: str  #: the file
    compression: str  #: none, gzip or zlib
    records: int  #: records read (up to the damage, if any)
    examples: int  #: of those, tf.Examples
    bytes: int  #: bytes of those records, framing included
    features: List[Dict[str, Any]]  #: per key: key, kind, records (holding it), min_values, max_values
    first_records: List[Dict[str, Any]]  #: the first n: index, offset, size, example, features (key/kind/count/preview)
    #: the first n records as {key: [values]} (bytes, int or float); for plain (uncompressed) local files
    first_examples: List[Dict[str, List[Any]]]
    error: Optional[str]  #: the damage that stopped reading, or None


def inspect(file: PathLike, n: int = 3, compression: str = "auto") -> Inspection:
    """A quick look at a TFRecord ``file`` (a path, or an ``s3://`` / ``https://`` object, downloaded once into a
    temporary folder), as ``shard inspect --json -n N FILE``: record count, feature keys with kinds and value
    counts, and the first ``n`` records (previews, and for a local file as {key: [values]} dicts).
    ``compression``: auto (detected), none, gzip or zlib. A damaged file is read up to the damage (``error`` says
    where). Raises FileNotFoundError / ValueError when the file cannot be read at all."""
    path = os.fsdecode(file)
    remote = path.startswith(("s3://", "https://", "http://"))
    if not remote and not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", path)
    doc = json.loads(_libshard._inspect(os.fsencode(path), n, compression))
    heads: List[Dict[str, List[Any]]] = []
    if n > 0 and doc["examples"] > 0 and doc["compression"] == "none" and not remote:
        try:
            reader = _libshard.ShardReader(path, verify_crc=True, use_index=False)
            for i in range(min(n, doc["records"], len(reader))):
                heads.append(reader.example(i) if doc["first_records"][i]["example"] else {})
        except (OSError, ValueError):  # damage the summary above reports; the dicts stop short
            pass
    return Inspection(doc["file"], doc["compression"], doc["records"], doc["examples"], doc["bytes"], doc["features"],
                      doc["first_records"], heads, doc["error"])


class ReportPage(str):
    """The path of a page ``report()`` wrote (a ``str``); in a notebook the page shows inline."""

    @property
    def path(self) -> str:
        """The page's path."""
        return str(self)

    def _repr_html_(self) -> str:
        with open(self, encoding="utf-8") as f:
            return f.read()


def report(dataset: PathLike, output: Optional[PathLike] = None, *, thumbnails: Optional[int] = None,
           max_classes: Optional[int] = None, thumbnail_size: Optional[int] = None, seed: Optional[int] = None,
           verify: bool = False, decode: bool = False, threads: int = 0) -> ReportPage:
    """Writes the ``shard report`` page of a converted ``dataset`` (its folder or ``manifest.json``) to
    ``output`` (default: ``report.html`` beside the manifest) and returns its path as a :class:`ReportPage`,
    which a notebook shows inline. ``thumbnails`` per class, ``max_classes`` in charts, ``thumbnail_size`` in
    pixels and ``seed`` of the thumbnail choice are the program's options (None: its defaults); ``verify``
    (with ``decode``, on ``threads``) adds ``shard verify``'s result. Raises ValueError with the program's
    message when the page cannot be written (no readable manifest, a bad option)."""
    if decode and not verify:
        raise ValueError("decode: needs verify=True")
    return ReportPage(_libshard._report(os.fsencode(dataset), b"" if output is None else os.fsencode(output),
                                        thumbnails, max_classes, thumbnail_size, seed, verify, decode, threads))
