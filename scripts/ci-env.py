#!/usr/bin/env python3
# Runs a command the way CI does: every descriptor above 2 closed (this machine's shells leak
# some, and a test can pass only through one) and only PATH and HOME kept, plus any NAME=VALUE
# given before the command. Usage: scripts/ci-env.py [NAME=VALUE ...] COMMAND [ARG ...]
import os
import sys

os.closerange(3, 65536)
env = {k: os.environ[k] for k in ('PATH', 'HOME') if k in os.environ}
args = sys.argv[1:]
while args and '=' in args[0] and not args[0].startswith('-'):
    name, value = args.pop(0).split('=', 1)
    env[name] = value
os.execvpe(args[0], args, env)
