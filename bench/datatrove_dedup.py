"""Runs datatrove's MinHash deduplication on a corpus, the way its documentation does.

    datatrove_dedup.py SHARDS_DIR --work DIR --stats STATS.json [--workers N]

SHARDS_DIR holds the corpus as JSONL shards ({"id": ..., "text": ...}); bench.py writes
them, one per core, untimed: datatrove runs one task per input file, so a single file
would leave the second core idle in the stages that read the corpus.

The four stages of datatrove's example `examples/minhash_deduplication.py`, each with its
LocalPipelineExecutor (the example's SlurmPipelineExecutor on one machine):

  1 signatures  JsonlReader → MinhashDedupSignature (one task per shard)
  2 buckets     MinhashDedupBuckets (one task per bucket)
  3 clusters    MinhashDedupCluster (one task)
  4 filter      JsonlReader → MinhashDedupFilter (the removed documents to an exclusion
                JsonlWriter) → JsonlWriter (the survivors), one task per shard

The MinHash configuration is the example's: `MinhashConfig(hash_config=HashConfig(
precision=64), num_buckets=14, hashes_per_bucket=8)`, which is also datatrove's default
(word 5-grams of its simplified text, English word tokenizer, xxhash, seed 1). The
example's TokensCounter is left out: it loads a tokenizer from the Hugging Face Hub, and
it measures nothing about deduplication. The writers write plain JSONL (the example's
writers gzip it), as neardup's `dedup` does.

Each stage is timed on its own; the stats file gives the stage times, the document
counts and the ids of the removed documents (read back from the exclusion writer's
files after the run, untimed).
"""

import argparse
import glob
import json
import os
import sys
import time
from importlib.metadata import version


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shards", help="folder of JSONL shards")
    ap.add_argument("--work", required=True, help="a new folder for datatrove's signatures, buckets, logs and outputs")
    ap.add_argument("--stats", required=True, help="stage times, counts and removed ids, JSON")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="tasks run at once (default: the cores)")
    args = ap.parse_args()

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.typeshelper import Languages

    if os.path.exists(args.work) and os.listdir(args.work):
        # The executors skip tasks a previous run completed: a stale folder would time nothing.
        sys.exit(f"datatrove_dedup.py: {args.work} is not empty")
    shards = sorted(glob.glob(os.path.join(args.shards, "*.jsonl")))
    if not shards:
        sys.exit(f"datatrove_dedup.py: no .jsonl shards in {args.shards}")
    tasks = len(shards)
    work = lambda *p: os.path.join(args.work, *p)  # noqa: E731

    config = MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8)
    workers = lambda n: max(1, min(n, args.workers))  # noqa: E731
    stages = {
        "signatures": LocalPipelineExecutor(
            pipeline=[
                JsonlReader(args.shards, glob_pattern="*.jsonl"),
                MinhashDedupSignature(output_folder=work("signatures"), config=config, language=Languages.english),
            ],
            tasks=tasks,
            workers=workers(tasks),
            logging_dir=work("logs", "signatures"),
        ),
        "buckets": LocalPipelineExecutor(
            pipeline=[MinhashDedupBuckets(input_folder=work("signatures"), output_folder=work("buckets"), config=config)],
            tasks=config.num_buckets,
            workers=workers(config.num_buckets),
            logging_dir=work("logs", "buckets"),
        ),
        "clusters": LocalPipelineExecutor(
            pipeline=[MinhashDedupCluster(input_folder=work("buckets"), output_folder=work("remove_ids"), config=config)],
            tasks=1,
            logging_dir=work("logs", "clusters"),
        ),
        "filter": LocalPipelineExecutor(
            pipeline=[
                JsonlReader(args.shards, glob_pattern="*.jsonl"),
                MinhashDedupFilter(
                    input_folder=work("remove_ids"),
                    exclusion_writer=JsonlWriter(work("removed"), compression=None),
                ),
                JsonlWriter(work("deduplicated_output"), compression=None),
            ],
            tasks=tasks,
            workers=workers(tasks),
            logging_dir=work("logs", "filter"),
        ),
    }
    times = {}
    for name, executor in stages.items():
        t = time.perf_counter()
        executor.run()
        times[name] = time.perf_counter() - t

    def read_ids(folder):
        ids = []
        for path in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
            with open(path, encoding="utf-8") as f:
                ids.extend(json.loads(line)["id"] for line in f)
        return ids

    removed = read_ids(work("removed"))
    kept = read_ids(work("deduplicated_output"))
    with open(args.stats, "w", encoding="utf-8") as f:
        json.dump(
            {
                "tool": "datatrove",
                "version": version("datatrove"),
                "config": str(config),
                "tasks": tasks,
                "workers": args.workers,
                "stages": times,
                "kept": len(kept),
                "removed_ids": removed,
            },
            f,
        )


if __name__ == "__main__":
    main()
