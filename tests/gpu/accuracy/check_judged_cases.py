#!/usr/bin/env python3
"""Asks `zoobench same` every question in a judged-case folder and counts agreement.

    python3 check_judged_cases.py CASES_DIR [--zoobench build/zoobench] [--require-upstream]

Each case of CASES_DIR/cases.json (written by generate_judged_cases.py) becomes
`zoobench same ref.pt res.pt [--fp64 fp64.pt] [options]`; exit 0 means "same", 1 "different",
anything else is an error. Exit status: 0 when every case agrees with its judge, 1 otherwise
(or when --require-upstream is given and a case was judged by the re-implementation).
Needs only the standard library.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys


def command(zoobench, root, case):
    o = case["options"]
    cmd = [zoobench, "same", os.path.join(root, case["ref"]), os.path.join(root, case["res"])]
    if case.get("fp64"):
        cmd += ["--fp64", os.path.join(root, case["fp64"])]
    cmd += ["--tol", repr(float(o["tol"]))]
    if o.get("cos_similarity"):
        cmd.append("--cosine")
    if o.get("equal_nan"):
        cmd.append("--equal-nan")
    if o.get("use_larger_multiplier_for_smaller_tensor"):
        cmd.append("--larger-multiplier-for-small-tensors")
    if o.get("use_iou_for_bool"):
        cmd += ["--iou-for-bool", "--iou-threshold", repr(float(o.get("iou_threshold", 0.99)))]
    return cmd


def ask(zoobench, root, case):
    cmd = command(zoobench, root, case)
    done = subprocess.run(cmd, capture_output=True, text=True)
    verdict = {0: True, 1: False}.get(done.returncode)
    return case, cmd, verdict, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases_dir")
    parser.add_argument("--zoobench", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "zoobench"))
    parser.add_argument("--require-upstream", action="store_true",
                        help="fail unless every case was judged by torch._dynamo.utils.same")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = parser.parse_args()

    with open(os.path.join(args.cases_dir, "cases.json")) as f:
        suite = json.load(f)
    if suite.get("format") != "zoobench-judged-cases/1":
        sys.exit(f"{args.cases_dir}/cases.json is not a zoobench-judged-cases/1 file")
    if not os.access(args.zoobench, os.X_OK):
        sys.exit(f"no zoobench binary at {args.zoobench}: build it or pass --zoobench")
    cases = suite["cases"]
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c["name"])]

    agree, disagree, errors = 0, [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for case, cmd, verdict, done in pool.map(lambda c: ask(args.zoobench, args.cases_dir, c), cases):
            if verdict is None:
                errors.append((case, cmd, done))
            elif verdict == case["expected"]:
                agree += 1
                if args.verbose:
                    print(f"ok   {case['name']}: {'same' if verdict else 'different'}")
            else:
                disagree.append((case, cmd, done))

    for kind, items in (("DISAGREE", disagree), ("ERROR", errors)):
        for case, cmd, done in items:
            expected = "same" if case["expected"] else "different"
            print(f"{kind} {case['name']}: judge ({case['judge']}) says {expected}, "
                  f"zoobench exited {done.returncode}")
            if case.get("judge_error"):
                print(f"    the judge raised: {case['judge_error']}")
            print("    " + " ".join(cmd))
            for line in (done.stdout + done.stderr).strip().splitlines()[:8]:
                print("    | " + line)

    judges = sorted({c["judge"] for c in cases})
    upstream = sum(c["judge"] == "torch._dynamo.utils.same" for c in cases)
    same_count = sum(c["expected"] for c in cases)
    print(f"agreement: {agree}/{len(cases)} cases ({same_count} same, {len(cases) - same_count} "
          f"different; {len(disagree)} disagree, {len(errors)} errors); judged by: "
          f"{', '.join(judges)}; torch {suite.get('versions', {}).get('torch')} on "
          f"{suite.get('device')}")
    failed = bool(disagree or errors)
    if args.require_upstream and upstream != len(cases):
        print(f"--require-upstream: {len(cases) - upstream} cases were not judged by "
              "torch._dynamo.utils.same")
        failed = True
    sys.exit(1 if failed or not cases else 0)


if __name__ == "__main__":
    main()
