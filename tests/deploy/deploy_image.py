"""check_deploy.py image: deploy/Dockerfile, its stages and packages against the built binary."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from deploy_common import ROOT, expect_refused, report_outcome

BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}  # in every Debian image


def dockerfile_instructions(text):
    """(instruction, argument) pairs, continuation lines joined, comments and directives dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if cur and s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        word, _, rest = cur.partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def stages(instrs):
    st = []
    for ins, arg in instrs:
        if ins == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", arg, re.I)
            st.append({"image": m.group(1), "name": m.group(2), "instrs": []})
        elif st:
            st[-1]["instrs"].append((ins, arg))
    return st


def apt_packages(run_arg):
    m = re.search(r"apt-get install ([^&;|]*)", run_arg)
    return [w for w in (m.group(1).split() if m else []) if not w.startswith("-")]


def ignored(path, patterns):
    """Docker's ignore rules, as far as this file uses them: the last matching pattern wins."""
    import fnmatch
    result = False
    for p in patterns:
        neg = p.startswith("!")
        pat = p[1:] if neg else p
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[:k]), pat) for k in range(1, len(parts) + 1)):
            result = not neg
    return result


def needed_packages(binary):
    """The Debian package of each library the binary links directly: {soname: package}."""
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    sonames = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M))
    paths.update({os.path.basename(p): p for p in re.findall(r"^\s*(/\S+) \(0x", ldd, re.M)})
    cands = {}
    for so in sonames:
        p = paths.get(so)
        if p:  # dpkg records /lib/... or /usr/lib/... (merged /usr): ask for both, and the file itself
            cands[so] = [p, p[4:] if p.startswith("/usr/") else "/usr" + p, os.path.realpath(p)]
    owners = {}
    every = sorted({c for cs in cands.values() for c in cs})
    r = subprocess.run(["dpkg", "-S"] + every, capture_output=True, text=True) if every else None
    for line in (r.stdout.splitlines() if r else []):
        pkg, _, path = line.partition(": ")
        owners[path.strip()] = pkg.split(":")[0].strip()  # libfoo1:amd64 -> libfoo1
    return {so: next((owners[c] for c in cands.get(so, []) if c in owners), None) for so in sonames}


def package_known(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    if r.returncode == 0 and "install ok installed" in r.stdout:
        return True
    r = subprocess.run(["apt-cache", "show", pkg], capture_output=True, text=True)
    return r.returncode == 0 and bool(r.stdout.strip())


def is_dpdk_plugin(pkg):
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "/dpdk/pmds-" in r.stdout


def check_dockerfile(dfile, ignore_file, needed):
    errors, notes = [], []
    st = stages(dockerfile_instructions(open(dfile).read()))
    if [(s["image"], s["name"]) for s in st] != [("debian:12", "build"), ("debian:12-slim", "runtime")]:
        return [f"stages must be debian:12 AS build, then debian:12-slim AS runtime: "
                f"{[(s['image'], s['name']) for s in st]}"], notes
    build, runtime = st
    runs = " && ".join(a for i, a in build["instrs"] if i == "RUN")
    if "scripts/deps.sh release" not in runs:
        errors.append("the build stage must install the build's packages with scripts/deps.sh release")
    if any(o not in runs for o in ("--buildtype=release", "-Ddpdk=enabled", "-Dotg=enabled", "-Dtests=false")):
        errors.append("the build stage must configure meson --buildtype=release -Ddpdk=enabled -Dotg=enabled "
                      "-Dtests=false")
    patterns = [l.strip() for l in open(ignore_file) if l.strip() and not l.startswith("#")]
    for i, a in build["instrs"]:
        if i != "COPY" or a.startswith("--from"):
            continue
        for src in a.split()[:-1]:
            if not os.path.exists(os.path.join(ROOT, src)):
                errors.append(f"COPY {src}: no such file in the repository")
            elif ignored(src, patterns):
                errors.append(f"COPY {src}: excluded by {os.path.basename(ignore_file)}")
    if not ignored("build/src/linerate", patterns) or not ignored(".git/config", patterns):
        errors.append(f"{os.path.basename(ignore_file)} must keep build/ and .git out of the context")
    entry = [a for i, a in runtime["instrs"] if i == "ENTRYPOINT"]
    if entry != ['["/usr/local/bin/linerate"]']:
        errors.append(f"the runtime's ENTRYPOINT must be [\"/usr/local/bin/linerate\"], is {entry}")
    copies = [a for i, a in runtime["instrs"] if i == "COPY"]
    if not any(a.startswith("--from=build") and a.endswith(" /usr/local/bin/linerate") for a in copies):
        errors.append("the runtime stage must copy the binary from the build stage to /usr/local/bin/linerate")
    if not any("/bpf" in a for a in copies):
        errors.append("the runtime stage must copy the XDP programs' objects")
    if any("deps.sh" in a or "meson" in a or "g++" in a for i, a in runtime["instrs"] if i == "RUN"):
        errors.append("the runtime stage builds nothing")
    pkgs = [p for i, a in runtime["instrs"] if i == "RUN" for p in apt_packages(a)]
    if not pkgs:
        return errors + ["the runtime stage installs no packages"], notes
    have = set(pkgs)
    for so, pkg in sorted(needed.items()):
        if pkg is None:
            errors.append(f"{so}: the binary links it but no Debian package holds it")
        elif pkg not in have | BASE_PACKAGES:
            errors.append(f"{so}: the binary links it, its package {pkg} is not in the runtime stage")
    needed_pkgs = set(needed.values())
    for p in pkgs:
        if p.startswith("lib") and not p.startswith("librte-") and p not in needed_pkgs:
            errors.append(f"runtime package {p}: the binary links no library of it (stale?)")
        if p.startswith("librte-") and p not in needed_pkgs and not is_dpdk_plugin(p):
            errors.append(f"runtime package {p}: neither linked nor a DPDK driver the EAL loads (pmds-*)")
        if not package_known(p):
            errors.append(f"runtime package {p}: not a Debian 12 package here (dpkg, apt-cache)")
    notes.append(f"runtime stage: {len(pkgs)} packages cover the {len(needed)} libraries the binary links "
                 f"({len([p for p in pkgs if p.startswith('librte-') and p not in needed_pkgs])} DPDK drivers "
                 "loaded at run time besides); each is a Debian 12 package")
    return errors, notes


def part_image(rep):
    dfile = os.path.join(ROOT, "deploy", "Dockerfile")
    ignore = os.path.join(ROOT, "deploy", "Dockerfile.dockerignore")
    hadolint = os.path.join(os.path.dirname(sys.executable), "hadolint")
    r = subprocess.run([hadolint, "--no-color", dfile], capture_output=True, text=True)
    rep.check(r.returncode == 0, "hadolint deploy/Dockerfile: no findings", (r.stdout + r.stderr).strip())
    binary = os.environ.get("LINERATE", os.path.join(ROOT, "build", "src", "linerate"))
    if not rep.check(os.access(binary, os.X_OK), f"the built binary {binary} is there"):
        return
    needed = needed_packages(binary)
    print(f"     linked: {', '.join(f'{s} ({p})' for s, p in sorted(needed.items()))}")
    errors, notes = check_dockerfile(dfile, ignore, needed)
    report_outcome(rep, errors, notes,
                   "stages debian:12 (scripts/deps.sh release, meson release) and debian:12-slim; ENTRYPOINT "
                   "/usr/local/bin/linerate; what the build copies is in the context, build/ and .git are not")

    def broken(label, fname, old, new, needle, lint=False):
        with tempfile.TemporaryDirectory() as tmp:
            src = {"Dockerfile": dfile, "Dockerfile.dockerignore": ignore}
            paths = {}
            for k, v in src.items():
                paths[k] = os.path.join(tmp, k)
                shutil.copy(v, paths[k])
            text = open(paths[fname]).read()
            if old not in text:
                rep.fail(f"broken copy {label}: {old!r} not in {fname}")
                return
            open(paths[fname], "w").write(text.replace(old, new, 1))
            if lint:
                rr = subprocess.run([hadolint, "--no-color", paths["Dockerfile"]], capture_output=True, text=True)
                errs = [] if rr.returncode == 0 else [rr.stdout]
            else:
                errs, _ = check_dockerfile(paths["Dockerfile"], paths["Dockerfile.dockerignore"], needed)
            expect_refused(rep, label, errs, needle)

    broken("a linked library's package left out", "Dockerfile", "      libxdp1 \\\n", "",
           "libxdp.so.1: the binary links it, its package libxdp1 is not in the runtime stage")
    broken("a package the binary does not link", "Dockerfile", "      iproute2 \\\n",
           "      iproute2 \\\n      libgtest-dev \\\n", "libgtest-dev: the binary links no library")
    broken("another entrypoint", "Dockerfile", 'ENTRYPOINT ["/usr/local/bin/linerate"]',
           'ENTRYPOINT ["/bin/sh"]', "ENTRYPOINT must be")
    broken("the sources kept out of the context", "Dockerfile.dockerignore", "!src\n", "", "COPY src: excluded")
    broken("an unversioned base image (hadolint)", "Dockerfile", "FROM debian:12-slim AS runtime",
           "FROM debian AS runtime", "DL3006", lint=True)
