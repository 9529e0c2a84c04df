#!/usr/bin/env python3
"""A reference external driver: works one armbench run through `workflow next --prepare`,
`workflow launch` and `workflow report` until the run is done, then prints the done envelope.

    python3 examples/drivers/driver.py <run> [--tools agent,claude] [--name ci-1] [--serve]

With `--serve` it starts `armbench workflow serve <run>` once and sends it the same requests as
JSON lines (one process for the whole run); without it, each request is an armbench process.

It declares a sandbox (run it in CI or a container), lets armbench prepare each trial's clone
and launch the tool there, and reports what the launch said. Only the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def armbench(*args: str) -> dict:
    """Run `armbench <args>` and return its envelope's data (exit on an error envelope)."""
    exe = os.environ.get("ARMBENCH", "armbench")
    done = subprocess.run([exe, *args], capture_output=True, text=True)
    envelope = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" in envelope:
        sys.exit(f"armbench {args[0]} {args[1] if len(args) > 1 else ''}: "
                 f"{envelope['error']['message']}")
    return envelope["data"]


class Server:
    """`armbench workflow serve <run>`: one request line in, one envelope line out."""

    def __init__(self, run: str) -> None:
        exe = os.environ.get("ARMBENCH", "armbench")
        self.proc = subprocess.Popen([exe, "workflow", "serve", run], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, request: dict) -> dict:
        """Send one request and return its envelope's data (exit on an error envelope)."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"armbench workflow serve ended (exit {self.proc.wait()})")
        envelope = json.loads(line)
        if "error" in envelope:
            sys.exit(f"armbench workflow serve, {request['verb']}: "
                     f"{envelope['error']['message']}")
        return envelope["data"]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait()


def serve(run: str, can: dict) -> None:
    """The same loop over one `armbench workflow serve` process."""
    server = Server(run)
    try:
        while True:
            got = server.ask({"verb": "next", "can": can})
            if "done" in got:
                print(json.dumps(got["done"]))
                return
            if "wait" in got:
                time.sleep(got["wait"]["retryAfterS"] or 0.05)
                continue
            lease = got["lease"]["id"]
            report = server.ask({"verb": "launch", "lease": lease})["report"]
            server.ask({"verb": "report", "lease": lease, "result": report})
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--tools", default="", help="the tools this driver runs, comma-separated")
    parser.add_argument("--name", default="python-driver")
    parser.add_argument("--serve", action="store_true",
                        help="speak to one `armbench workflow serve` process")
    args = parser.parse_args()
    declared = {"driver": args.name, "isolation": "sandbox", "env": True, "unattended": True,
                "workspace": ["clone"], "tools": [t for t in args.tools.split(",") if t]}
    if args.serve:
        serve(args.run, declared)
        return
    can = json.dumps(declared)
    while True:
        got = armbench("workflow", "next", args.run, "--prepare", "--can", can)
        if "done" in got:
            print(json.dumps(got["done"]))
            return
        if "wait" in got:
            time.sleep(got["wait"]["retryAfterS"] or 0.05)
            continue
        lease = got["lease"]
        with tempfile.TemporaryDirectory() as tmp:
            result = os.path.join(tmp, "result.json")
            armbench(*lease["launch"][1:], "--result", result)
            armbench("workflow", "report", args.run, "--lease", lease["id"], "--result", result)


if __name__ == "__main__":
    main()
