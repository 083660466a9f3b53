"""Builds the benchmark corpora in bench/data/ as JSONL ({"id": ..., "text": ...}).

Every tool reads the same JSONL file, so parsing is the same work for all of them and
neardup's reader needs no options. A corpus is rebuilt only when its recipe (the `spec`
in its .meta.json) changes.

Only documents that still have text after normalization are kept: neardup would skip
the others ("empty") and the peers would have nothing to sketch, so keeping them would
only make the document counts disagree.
"""

import glob
import json
import os
import random
import re
import subprocess
import sys

from shingling import normalize

# Size of the quick-mode sample of PyPI summaries.
QUICK_SUMMARIES = 50_000
# A fixed seed: the quick sample must be the same on every machine.
SAMPLE_SEED = 20240601
# Standard-library files smaller than this are mostly empty __init__.py files and
# one-line shims; the long-document corpus is about documents of several KB.
MIN_SOURCE_BYTES = 1024
# Directories of a standard library that are not part of it (third-party packages) or
# are its test suite (left out to keep the corpus at a size datasketch can finish).
SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}


class CorpusError(Exception):
    pass


def _write_jsonl(path, records):
    tmp = path + ".tmp"
    docs = 0
    text_bytes = 0
    with open(tmp, "w", encoding="utf-8") as out:
        for rid, text in records:
            out.write(json.dumps({"id": rid, "text": text}, ensure_ascii=False))
            out.write("\n")
            docs += 1
            text_bytes += len(text.encode("utf-8"))
    os.replace(tmp, path)
    return docs, text_bytes


def _up_to_date(meta_path, data_path, spec):
    if not (os.path.exists(meta_path) and os.path.exists(data_path)):
        return None
    with open(meta_path, encoding="utf-8") as f:
        meta = json.load(f)
    return meta if meta.get("spec") == spec else None


def _build(data_dir, name, spec, describe, records):
    """Writes data_dir/name.jsonl and its .meta.json unless they match `spec` already."""
    os.makedirs(data_dir, exist_ok=True)
    data_path = os.path.join(data_dir, name + ".jsonl")
    meta_path = os.path.join(data_dir, name + ".meta.json")
    meta = _up_to_date(meta_path, data_path, spec)
    if meta is None:
        print(f"[corpus] building {name} ...", file=sys.stderr, flush=True)
        docs, text_bytes = _write_jsonl(data_path, records())
        meta = {"name": name, "spec": spec, "docs": docs, "text_bytes": text_bytes}
        meta.update(describe)
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
    meta["path"] = data_path
    return meta


# ---------------------------------------------------------------------------------------
# PyPI package summaries


def pypi_summaries(data_dir, tsv_path, quick, sample=None):
    """Non-empty summaries of the package list, id = package name: all of them, or a
    random sample of `sample` (of QUICK_SUMMARIES with `quick`)."""
    if sample is None and quick:
        sample = QUICK_SUMMARIES
    if not os.path.isfile(tsv_path):
        raise CorpusError(
            f"the PyPI package list is missing: {tsv_path}\n"
            "  (a TSV with the columns name, version, month, rank, summary; "
            "pass another path with --pypi-tsv, or skip this corpus with --corpus stdlib)"
        )
    tsv_path = os.path.abspath(tsv_path)
    stat = os.stat(tsv_path)
    name = f"pypi-summaries-{sample // 1000}k" if sample else "pypi-summaries"
    spec = {
        "source": tsv_path,
        "source_size": stat.st_size,
        "sample": sample,
        "seed": SAMPLE_SEED,
        "version": 1,
    }

    def rows():
        with open(tsv_path, encoding="utf-8", errors="replace", newline="") as f:
            header = f.readline().rstrip("\n").split("\t")
            if len(header) < 5 or header[0] != "name":
                raise CorpusError(
                    f"{tsv_path}: expected the columns name, version, month, rank, summary; "
                    f"got {header}"
                )
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if len(cols) >= 5 and normalize(cols[4]):
                    yield cols[0], cols[4]

    def records():
        if not sample:
            yield from rows()
            return
        # A random sample rather than the first N rows: the list is sorted by name, and
        # neighbouring names (foo-1, foo-2, ...) are unusually often near-duplicates.
        everything = list(rows())
        if sample > len(everything):
            raise CorpusError(f"{tsv_path} has {len(everything):,} non-empty summaries, fewer than the {sample:,} asked for")
        keep = sorted(random.Random(SAMPLE_SEED).sample(range(len(everything)), sample))
        for i in keep:
            yield everything[i]

    describe = {
        "title": "PyPI package summaries" + (f" (random sample of {sample:,})" if sample else ""),
        "origin": (
            f"the non-empty `summary` column of {tsv_path} (one line per package on PyPI, "
            "the package authors' own one-line descriptions); id = package name"
            + (f"; a random sample (seed {SAMPLE_SEED})" if sample else "")
        ),
    }
    return _build(data_dir, name, spec, describe, records)


# ---------------------------------------------------------------------------------------
# Python standard library sources of several installations


def _python_version(executable, fallback):
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True, text=True, timeout=30, check=True,
        )
        return out.stdout.strip() or fallback
    except (OSError, subprocess.SubprocessError):
        return fallback


def find_stdlibs(minors):
    """(label, lib dir) of pyenv's newest 3.N for each N in `minors`, then Debian's own.

    pyenv's builds are complete standard libraries of different releases (files that
    changed a little between releases are the near-duplicates); Debian's python3.11 is
    the same release line as pyenv's 3.11, patched and split differently by Debian.
    """
    found = []
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in minors:
        versions = []
        for d in glob.glob(os.path.join(pyenv_root, "versions", f"3.{minor}.*")):
            m = re.fullmatch(rf"3\.{minor}\.(\d+)", os.path.basename(d))
            lib = os.path.join(d, "lib", f"python3.{minor}")
            if m and os.path.isfile(os.path.join(lib, "os.py")):
                versions.append((int(m.group(1)), os.path.basename(d), lib))
        if versions:
            _, version, lib = max(versions)
            found.append((f"pyenv-{version}", lib))
    for lib in sorted(glob.glob("/usr/lib/python3.*")):
        if re.fullmatch(r"/usr/lib/python3\.\d+", lib) and os.path.isfile(os.path.join(lib, "os.py")):
            minor = lib.rsplit(".", 1)[1]
            version = _python_version(f"/usr/bin/python3.{minor}", f"3.{minor}")
            found.append((f"debian-{version}", lib))
    return found


def _source_files(lib, top_level_only):
    for dirpath, dirnames, filenames in os.walk(lib):
        dirnames[:] = [] if top_level_only else sorted(d for d in dirnames if d not in SKIP_DIRS)
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                path = os.path.join(dirpath, fn)
                if os.path.getsize(path) >= MIN_SOURCE_BYTES:
                    yield path


def python_stdlib(data_dir, quick):
    """The .py files of several Python standard libraries, id = install/relative path.

    Quick mode: pyenv's 3.12 and 3.13 only, top-level modules only (about 300 files).
    """
    minors = [12, 13] if quick else [10, 11, 12, 13]
    installs = find_stdlibs(minors)
    if quick:
        installs = [i for i in installs if i[0].startswith("pyenv-")]
    if len(installs) < 2:
        raise CorpusError(
            "the long-document corpus needs the standard libraries of at least two Python "
            f"installations (pyenv's 3.{'/3.'.join(map(str, minors))} under $PYENV_ROOT or "
            f"~/.pyenv, Debian's /usr/lib/python3.N); found {installs or 'none'}.\n"
            "  Skip it with --corpus pypi."
        )
    name = "python-stdlib-quick" if quick else "python-stdlib"
    # Lists, not tuples: the spec is compared with its JSON copy.
    spec = {
        "installs": [list(i) for i in installs],
        "min_bytes": MIN_SOURCE_BYTES,
        "skip": sorted(SKIP_DIRS),
        "top_level_only": quick,
        "version": 1,
    }

    def records():
        for label, lib in installs:
            for path in _source_files(lib, quick):
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", errors="replace")
                if normalize(text):
                    yield f"{label}/{os.path.relpath(path, lib)}", text

    labels = ", ".join(label for label, _ in installs)
    describe = {
        "title": f"Python standard library sources ({labels}{'; top-level modules' if quick else ''})",
        "origin": (
            f"every {'top-level ' if quick else ''}.py file of at least 1 KB in the standard library of each of these "
            f"installations on this machine: {'; '.join(f'{l} = {p}' for l, p in installs)} "
            "(without test suites and site-/dist-packages); id = installation/relative path. "
            "The same module in two releases is the typical near-duplicate."
        ),
    }
    return _build(data_dir, name, spec, describe, records)


# ---------------------------------------------------------------------------------------
# Templated pages: long documents whose candidates crowd just below the threshold

LICENCE_DIR = "/usr/share/common-licenses"
# Characters of licence text per template: long pages whose bulk is shared boilerplate.
TEMPLATE_CHARS = 6000
PAGES = 20_000
PAGES_QUICK = 3_000
# Share of pages that re-post an earlier page of the same template with one listing line
# replaced: the near-duplicates to be found.
REPOST_SHARE = 0.05
# Listing characters per page, drawn uniformly: with a 6,000-character template this puts
# two pages of one template at Jaccard ~0.6-0.8, just below t = 0.8.
LISTING_CHARS = (500, 2000)


def _templates():
    """Passages of the licence texts Debian ships in every installation (base-files)."""
    if not os.path.isdir(LICENCE_DIR):
        raise CorpusError(
            f"the templated-pages corpus takes its templates from {LICENCE_DIR} "
            "(Debian's base-files); it is missing. Skip the corpus with --corpus pypi,stdlib."
        )
    seen = set()
    templates = []
    for name in sorted(os.listdir(LICENCE_DIR)):
        path = os.path.join(LICENCE_DIR, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if text in seen:  # GPL is GPL-3, and so on
            continue
        seen.add(text)
        for start in range(0, len(text) - TEMPLATE_CHARS + 1, TEMPLATE_CHARS):
            templates.append((f"{name}@{start}", text[start:start + TEMPLATE_CHARS]))
    if len(templates) < 2:
        raise CorpusError(f"{LICENCE_DIR} holds fewer than two licence passages of {TEMPLATE_CHARS} characters")
    return templates


def templated_pages(data_dir, summaries_path, quick):
    """Long pages made of a licence passage (the template) and a listing of PyPI summaries.

    Pages of one template share its ~6,000 characters and differ in their listings, so
    most pairs of them sit at Jaccard 0.6-0.8: LSH makes many candidates that verification
    must reject. One page in twenty re-posts an earlier page of its template with one
    listing line replaced; those pairs (and pages with short listings) are the matches.
    """
    pages = PAGES_QUICK if quick else PAGES
    templates = _templates()
    summaries_path = os.path.abspath(summaries_path)
    spec = {
        "summaries": summaries_path,
        "summaries_size": os.stat(summaries_path).st_size,
        "templates": [t[0] for t in templates],
        "template_chars": TEMPLATE_CHARS,
        "pages": pages,
        "repost_share": REPOST_SHARE,
        "listing_chars": list(LISTING_CHARS),
        "seed": SAMPLE_SEED,
        "version": 1,
    }
    name = "templated-pages-quick" if quick else "templated-pages"

    def records():
        with open(summaries_path, encoding="utf-8") as f:
            lines = [json.loads(line)["text"] for line in f]
        rng = random.Random(SAMPLE_SEED)
        by_template = [[] for _ in templates]
        for i in range(pages):
            t = i % len(templates)
            label, template = templates[t]
            earlier = by_template[t]
            if earlier and rng.random() < REPOST_SHARE:
                listing = list(rng.choice(earlier))
                listing[rng.randrange(len(listing))] = rng.choice(lines)
            else:
                want = rng.randint(*LISTING_CHARS)
                listing, size = [], 0
                while size < want:
                    line = rng.choice(lines)
                    listing.append(line)
                    size += len(line) + 1
            earlier.append(listing)
            yield f"page-{i:06d}", template + "\n\nListings:\n" + "\n".join(listing)

    describe = {
        "title": "Templated pages (licence passages + PyPI summary listings)" + (" (quick)" if quick else ""),
        "origin": (
            f"{pages:,} generated pages (seed {SAMPLE_SEED}), each a {TEMPLATE_CHARS:,}-character passage of one of "
            f"the {len(templates)} licence texts in {LICENCE_DIR} followed by a listing of "
            f"{LISTING_CHARS[0]:,}-{LISTING_CHARS[1]:,} characters of PyPI package summaries; "
            f"{REPOST_SHARE:.0%} of pages re-post an earlier page of their template with one summary replaced. "
            "Pages of one template mostly sit at Jaccard 0.6-0.8, just below the threshold"
        ),
    }
    return _build(data_dir, name, spec, describe, records)


# ---------------------------------------------------------------------------------------
# Fragments planted in long documents: the containment benchmark's corpus

FRAGMENT_PAGES = 80_000
FRAGMENTS = 15_000
UNRELATED = 5_000
# Summaries per long page, and per fragment.
PAGE_SUMMARIES = (15, 40)
FRAGMENT_SUMMARIES = (2, 6)
# Share of a fragment's letters replaced, when it is edited (half of them are).
EDIT_SHARE = 0.02
# Summaries shorter than this are left out of the pages.
MIN_SUMMARY_CHARS = 30


def planted_fragments(data_dir, summaries_path):
    """Long pages of PyPI summaries (a digest of 15-40 packages each, drawn with
    replacement) and short documents: 15,000 fragments, each 2-6 consecutive summaries of
    one page (half of them with 2 % of their letters replaced), and 5,000 unrelated ones of
    summaries no page holds. Shuffled, so that any prefix of the file is a sample of the
    whole."""
    summaries_path = os.path.abspath(summaries_path)
    spec = {
        "summaries": summaries_path,
        "summaries_size": os.stat(summaries_path).st_size,
        "pages": FRAGMENT_PAGES,
        "fragments": FRAGMENTS,
        "unrelated": UNRELATED,
        "page_summaries": list(PAGE_SUMMARIES),
        "fragment_summaries": list(FRAGMENT_SUMMARIES),
        "edit_share": EDIT_SHARE,
        "min_summary_chars": MIN_SUMMARY_CHARS,
        "seed": SAMPLE_SEED,
        "version": 3,
    }

    def records():
        # Each distinct summary once, none shorter than a short sentence: PyPI repeats a
        # few boilerplate summaries thousands of times ("A small example package"), which
        # would make every page contain every short boilerplate document.
        with open(summaries_path, encoding="utf-8") as f:
            pool = list(dict.fromkeys(json.loads(line)["text"] for line in f))
        pool = [p for p in pool if len(p) >= MIN_SUMMARY_CHARS]
        rng = random.Random(SAMPLE_SEED)
        rng.shuffle(pool)
        # The unrelated documents' summaries are kept out of every page; the pages draw
        # theirs from the rest, with replacement (there are not enough for all of them).
        reserved = UNRELATED * FRAGMENT_SUMMARIES[1]
        at, rest = 0, pool[reserved:]
        pages = [
            [rng.choice(rest) for _ in range(rng.randint(*PAGE_SUMMARIES))]
            for _ in range(FRAGMENT_PAGES)
        ]
        out = [(f"page-{i}", " ".join(p)) for i, p in enumerate(pages)]
        letters = "abcdefghijklmnopqrstuvwxyz"
        for i in range(FRAGMENTS):
            host = rng.randrange(FRAGMENT_PAGES)
            page = pages[host]
            n = min(rng.randint(*FRAGMENT_SUMMARIES), len(page))
            start = rng.randrange(len(page) - n + 1)
            text = list(" ".join(page[start:start + n]))
            if i % 2:
                for _ in range(int(len(text) * EDIT_SHARE)):
                    text[rng.randrange(len(text))] = rng.choice(letters)
            out.append((f"fragment-{i}-of-page-{host}", "".join(text)))
        for i in range(UNRELATED):
            n = rng.randint(*FRAGMENT_SUMMARIES)
            out.append((f"other-{i}", " ".join(pool[at:at + n])))
            at += n
        rng.shuffle(out)
        yield from out

    describe = {
        "title": "Fragments planted in long pages (from PyPI package summaries)",
        "origin": (
            f"{FRAGMENT_PAGES:,} pages, each 15-40 PyPI package summaries (the distinct ones of {MIN_SUMMARY_CHARS} characters or more) drawn with replacement and joined (a digest); "
            f"{FRAGMENTS:,} fragments, each 2-6 consecutive summaries of one page, every second "
            f"one with {EDIT_SHARE:.0%} of its letters replaced; {UNRELATED:,} short documents "
            "of summaries no page holds; shuffled (seed "
            f"{SAMPLE_SEED}); id = page-N, fragment-I-of-page-N, other-I"
        ),
    }
    return _build(data_dir, "planted-fragments", spec, describe, records)
