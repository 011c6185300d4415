#!/usr/bin/env python3
# The npm registry reachable here serves only this platform's builds of packages that ship per-platform
# optional binaries (rollup, msgpackr-extract). `npm install` then writes a lock without entries for the
# other platforms, and `npm ci` rejects it ("Missing: X@ from lock file"). This adds those entries,
# tagged with their os/cpu/libc so npm skips them. Usage, after any npm install that changes the lock:
#   npm ci --ignore-scripts 2>&1 | grep Missing: | sed "s/.*Missing: \(.*\)@ from lock file/\1/" > /tmp/missing.txt
#   python3 .ci/lock-platforms.py package-lock.json /tmp/missing.txt
import json, re, sys
lock_path, missing_path = sys.argv[1], sys.argv[2]
lock = json.load(open(lock_path))
pk = lock["packages"]
missing = [l.strip() for l in open(missing_path) if l.strip()]
# the version each parent asks for
want = {}
for path, meta in pk.items():
    for dep, ver in (meta.get("optionalDependencies") or {}).items():
        want.setdefault(dep, ver)
def platform(name):
    base = name.split("/")[-1]
    os_ = next((o for o in ["android","darwin","freebsd","openbsd","openharmony","win32","linux","sunos","aix","netbsd"] if o in base), None)
    cpu = None
    for pat, c in [("arm64","arm64"),("aarch64","arm64"),("x64","x64"),("ia32","ia32"),("loong64","loong64"),("ppc64","ppc64"),("riscv64","riscv64"),("s390x","s390x"),("arm","arm")]:
        if re.search(r"(^|-)" + pat + r"($|-)", base): cpu = c; break
    libc = "musl" if "musl" in base else ("glibc" if base.endswith("-gnu") or "gnueabihf" in base else None)
    return os_, cpu, libc
for name in missing:
    ver = want.get(name)
    if ver is None: print("no version for", name); continue
    os_, cpu, libc = platform(name)
    entry = {"version": ver, "optional": True}
    if cpu: entry["cpu"] = [cpu]
    if libc: entry["libc"] = [libc]
    if os_: entry["os"] = [os_]
    pk["node_modules/" + name] = entry
lock["packages"] = dict(sorted(pk.items(), key=lambda kv: (kv[0] != "", kv[0])))
json.dump(lock, open(lock_path, "w"), indent=2)
open(lock_path, "a").write("\n")
print("added", len(missing))
