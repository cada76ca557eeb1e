# foresight — see README.md. Every target installs what it needs (make setup) first.
REPO ?= demo/minilib
STAGE ?=
CLONE ?=
FORESIGHT = node_modules/.bin/tsx pipeline/bin.ts
CLONE_FLAG = $(if $(CLONE),--clone $(CLONE),)
VITEST_ARGS ?=
ORACLE ?=

.PHONY: setup demo eval test mine stage publish typecheck bench bench-szz bench-validate bench-eval-images bench-interrupt bench-scale clean-demo

setup:
	@bash scripts/setup.sh

## Mine the bundled demo repository end to end (no network, no keys) and print a summary.
demo: setup
	@$(FORESIGHT) demo

## Grade the emitted rows in their eval images: the gold patches (default) or PREDICTIONS=preds.jsonl (SWE-bench format).
eval: setup
	@$(FORESIGHT) eval --dataset $(or $(DATASET),data/$(subst /,__,$(REPO))/emit/hf) $(if $(PREDICTIONS),--predictions $(PREDICTIONS),--gold)

## Unit tests and the end-to-end test through real Docker.
test: setup
	@bash scripts/setup-python.sh
	@node_modules/.bin/tsc --noEmit -p .
	@node_modules/.bin/vitest run $(VITEST_ARGS)

## Mine a repository: make mine REPO=owner/name [CLONE=path/to/local/clone]
mine: setup
	@$(FORESIGHT) run --repo $(REPO) $(CLONE_FLAG) $(if $(SINCE),--since $(SINCE),) $(if $(UNTIL),--until $(UNTIL),)

## Rerun one stage and those after it on cached artifacts: make stage STAGE=validate [REPO=owner/name]
stage: setup
	@test -n "$(STAGE)" || { echo "make stage: set STAGE to one of discover szz extract validate judge emit" >&2; exit 2; }
	@$(FORESIGHT) run --repo $(REPO) $(CLONE_FLAG) --from $(STAGE)

## Publish the emitted dataset to the Hugging Face hub (HF_TOKEN): make publish REPO_ID=owner/name [REPO=owner/name | DATASET=dir] [DRY_RUN=1 [REMOTE=hub|dir]] [PRIVATE=1]
publish: setup
	@test -n "$(REPO_ID)" || { echo "make publish: set REPO_ID=owner/name, the dataset repository on the hub" >&2; exit 2; }
	@bash scripts/setup-python.sh
	@$(FORESIGHT) publish --repo-id $(REPO_ID) $(if $(DATASET),--dataset $(DATASET),--repo $(REPO)) $(if $(DRY_RUN),--dry-run,) $(if $(REMOTE),--remote $(REMOTE),) $(if $(PRIVATE),--private,)

## Benchmarks (bench/README.md): discover+szz vs a B-SZZ baseline in the same run.
bench: bench-szz bench-validate

bench-szz: setup
	@node_modules/.bin/tsx bench/szz.ts $(if $(CLONE),--clone $(CLONE),) $(if $(filter-out demo/minilib,$(REPO)),--repo $(REPO),) $(if $(ORACLE),--oracle $(ORACLE),)

bench-validate: setup
	@node_modules/.bin/tsx bench/validate.ts $(if $(CLONE),--clone $(CLONE),) $(if $(filter-out demo/minilib,$(REPO)),--repo $(REPO),) $(if $(SINCE),--since $(SINCE),) $(if $(UNTIL),--until $(UNTIL),) $(if $(JOBS),--jobs $(JOBS),) $(if $(STRATEGIES),--strategies $(STRATEGIES),) $(if $(DATA),--data $(DATA),)

## The offline rules judges against changes whose nature the history states (release notes, "Regression in <sha>", reverts by diff): precision and recall per rule.
.PHONY: bench-rules
bench-rules: setup
	@node_modules/.bin/tsx bench/rules-judges.ts --clone $(or $(CLONE),$(error CLONE=<a clone> is required)) $(if $(SINCE),--since $(SINCE),) $(if $(UNTIL),--until $(UNTIL),)

## Validate through a Redis queue with 1 and 2 local workers (WORKERS=1,2): throughput and its ratio.
bench-scale: setup
	@node_modules/.bin/tsx bench/scale.ts $(if $(CLONE),--clone $(CLONE),) $(if $(filter-out demo/minilib,$(REPO)),--repo $(REPO),) $(if $(SINCE),--since $(SINCE),) $(if $(UNTIL),--until $(UNTIL),) $(if $(WORKERS),--workers $(WORKERS),)

## Eval images of an emitted dataset's test rows, built fresh with full and depth-1 history (s, MB), and the gold gate in each.
bench-eval-images: setup
	@node_modules/.bin/tsx bench/eval-images.ts --dataset $(or $(DATASET),$(error DATASET=<data/owner__name/emit/hf> is required)) --clone $(or $(CLONE),$(error CLONE=<the clone it was mined from> is required))

## SIGTERM and SIGINT at random points of validate, then a rerun: identical output, no container left.
bench-interrupt: setup
	@node_modules/.bin/tsx bench/interrupt.ts $(if $(TRIALS),--trials $(TRIALS),)

## The installable CLI in dist/ (what npm pack ships: compiled JS run by node, runtime files beside it).
.PHONY: build
build: setup
	@npm run --silent build

typecheck:
	@node_modules/.bin/tsc --noEmit -p .

clean-demo:
	rm -rf data/demo__minilib
