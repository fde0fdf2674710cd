#!/usr/bin/env python3
"""hotline's exact calls against uftrace's, on uftrace 0.13's own test programs (issue 29).

Every program of the peer suite (../shared/peers/uftrace-0.13-tests: s-*.c, s-*.cpp) is built by
its uftrace test's own build() (t*.py, through runtest.py's TestBase) with -finstrument-functions
at two levels, run with the arguments that test gives it, and recorded by `hotline record` (counts
mode and timed mode) and by `uftrace record`. For each program x build x mode, the calls of every
instrumented function and of every caller -> callee edge between instrumented functions are
compared.

Every difference must be in KNOWN_DIFFERENCES below, with who is right and why. The test fails on a
difference that is not there, and on an entry that no longer differs, so the table stays true as
fixes land. It exits 77 (ctest's SKIP_RETURN_CODE) when the peer folder or uftrace is missing.

  compare_with_uftrace.py --hotline build/bin/hotline [--peers DIR] [--jobs 2]
                          [--only abc,fork] [--keep] [--verbose]
"""

import argparse
import collections
import glob
import importlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
TIMEOUT_S = 60  # per recording; the programs run in milliseconds

# The two builds. O0 is what runtest.py compiles (`-finstrument-functions -O0` after TestBase's
# default_cflags: -fno-inline -fno-builtin -fno-ipa-cp -fno-omit-frame-pointer
# -D_FORTIFY_SOURCE=0). O2 is how a user builds: `-O2 -g -finstrument-functions` alone, so the
# compiler inlines, clones and omits frame pointers. -pg builds are not compared: hotline does not
# read mcount's counts (docs/tracing.md, "-pg builds").
BUILDS = {
    'O0': {'default_cflags': None, 'cflags': '-O0'},
    'O2': {'default_cflags': [], 'cflags': '-O2 -g'},
}

# hotline's two tracing modes (docs/tracing.md).
MODES = {'counts': [], 'timed': ['--trace=timed']}

# Programs whose uftrace tests run them only from a prerun()/runcmd() of their own: the arguments
# those give (s-diff is recorded with 0 and with 1; 1 runs every function).
ARGS_OF = {'diff': ['1'], 'exit': [], 'agent': []}

# Programs that cannot be built from the peer folder alone; compared once they build.
UNBUILDABLE = {
    'sdt': '<sys/sdt.h> is not installed (Debian systemtap-sdt-dev)',
    'signal2': 'includes ../utils/compiler.h from uftrace\'s source tree, not in the peer folder',
}

# ---------------------------------------------------------------------------------------------
# The known differences: (program, build, mode, kind, key, hotline, uftrace, reason).
#   program: a program or a tuple of them; build: 'O0', 'O2' or '*'; mode: 'counts', 'timed' or
#     '*'. An entry must hold in every program x build x mode it covers.
#   kind 'func': key the function; hotline and uftrace the calls each counts.
#   kind 'edge': key (caller, callee); hotline and uftrace the calls each counts.
#   kind 'name': key (hotline's name, uftrace's name) of one function; the comparison goes on
#     under uftrace's name.
#   kind 'either': key ((kind, key, hotline, uftrace), ...): one of these, for a peer's race.
#   hotline, uftrace: None where any count matches (names).
# Each reason says who is right. An entry goes once the fix lands: the test says it is stale.
# ---------------------------------------------------------------------------------------------
FORK_CHILD = ("hotline right: the forked child calls it from main too; uftrace replays a "
              "child's task without the frames it inherited (its first calls sit at depth 1 with "
              'no caller)')
DAEMON_CHILD = ("hotline right: daemon()'s child calls a from main; uftrace replays the child's "
                'task without the frames it inherited, so its call to a has no caller')
AFTER_THREAD_END = ("hotline's counts right (gdb agrees): glibc runs the thread's TSD destructor, "
                    "and in __libc_thread_freeres the program's free twice, after the start "
                    "routine returned; uftrace (like hotline's timed mode, docs/tracing.md) stops "
                    'recording a thread there')
CREAT = ('both wrong, a name: the function called is libbaz.so\'s extern "C" creat, but the '
         'address -finstrument-functions passes for it comes from the GOT, where the earlier '
         "loaded libc's creat preempts it; uftrace names libc's alias creat64, hotline __creat64 "
         "(the entry hook's own return address, inside libbaz's creat, would tell)")
CREAT_CALLER = ('hotline defect: the caller of Child::Child, found from the call site (in timed '
                'mode too, since the call site is not in the code of the frame it named '
                '__creat64), is libbaz\'s creat, which hotline names creat where it names the '
                'callee __creat64 (above): one function, two names, and an edge between them '
                'that no traced name carries')

KNOWN_DIFFERENCES = [
    # uftrace loses the parent across fork and exec.
    ('fork', '*', '*', 'edge', ('main', 'a'), 2, 1, FORK_CHILD),
    ('malloc-fork', 'O0', '*', 'edge', ('main', 'malloc'), 2, 1, FORK_CHILD),
    ('malloc-fork', 'O0', '*', 'edge', ('main', 'free'), 2, 1, FORK_CHILD),
    ('daemon', '*', '*', 'edge', ('main', 'a'), 1, 0, DAEMON_CHILD),
    ('thread-exec', '*', '*', 'either',
     (('edge', ('main', 'main'), 0, 1), ('func', 'main', 2, 1)), None, None,
     'hotline right: both programs\' main run once, the second without a caller; as a thread '
     'execs, uftrace either nests the new main under the old one, still open in the task that '
     'becomes the new process, or (a race) loses the old main\'s records, never written out'),
    # uftrace stops counting a thread at the end of its start routine.
    (('thread-tsd', 'malloc-tsd'), '*', 'counts', 'func', 'tsd_dtor', 2, 1, AFTER_THREAD_END),
    ('malloc-tsd', '*', 'counts', 'func', 'free', 4, 1, AFTER_THREAD_END),
    ('malloc-tsd', '*', 'counts', 'edge', ('tsd_dtor', 'free'), 2, 1, AFTER_THREAD_END),
    # Names: one function, two names.
    ('dwarf2', 'O2', '*', 'name',
     ('main::{lambda at s-dwarf2.cpp:41:23}',
      'main::{lambda(int, int)#1}::operator()(int, int) const'), None, None,
     'both right, a name: hotline names a lambda whose DWARF has no linkage name by its place; '
     'uftrace by its symbol (at -O0, without DWARF, hotline does too)'),
    ('nested', 'O2', '*', 'name', ('foo_internal', 'foo_internal.0'), None, None,
     'both right, a name: GCC gives the nested function foo_internal the local symbol '
     'foo_internal.0; hotline names it as DWARF does (the source\'s name), uftrace by the symbol'),
    ('dlopen2', '*', '*', 'name', ('__creat64', 'creat64'), None, None, CREAT),
    ('dlopen2', '*', 'counts', 'edge', ('creat64', 'Child::Child'), 0, 1, CREAT_CALLER),
    # At -O2 Child::Child is inlined into creat: timed mode's frame of creat is its caller.
    ('dlopen2', 'O0', 'timed', 'edge', ('creat64', 'Child::Child'), 0, 1, CREAT_CALLER),
    ('dlopen2', '*', 'counts', 'edge', ('main', 'creat64'), 0, 1,
     'hotline defect: libbaz\'s creat is entered through an address that libc\'s creat preempts '
     '(the GOT): its entry hook names libc\'s __creat64, but runs inside libbaz\'s creat. Counts '
     'mode takes a hook that runs outside its function for an inlined copy, and names the code '
     'it runs in (libbaz\'s creat) the caller, where main is'),
]


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# The peer suite: which test builds and runs each program
# ---------------------------------------------------------------------------------------------

TEST_GLOB = 't[0-9][0-9][0-9]_*.py'


class Peers:
    """runtest.py's TestBase, set up to build in our scratch folder."""

    def __init__(self, peers_dir, scratch):
        self.dir = peers_dir
        # runtest.py finds a source as <basedir>/tests/s-*.c: basedir is a folder of ours holding
        # a `tests` link to the peer folder, which is only read.
        link_root = os.path.join(scratch, 'src')
        os.makedirs(link_root, exist_ok=True)
        link = os.path.join(link_root, 'tests')
        if not os.path.lexists(link):
            os.symlink(peers_dir, link)
        sys.dont_write_bytecode = True  # no __pycache__ in the peer folder
        if peers_dir not in sys.path:
            sys.path.insert(0, peers_dir)
        tempfile.tempdir = os.path.join(scratch, 'tmp')  # TestBase makes a folder per instance
        os.makedirs(tempfile.tempdir, exist_ok=True)
        self.runtest = importlib.import_module('runtest')
        base = self.runtest.TestBase
        base.basedir = link_root
        base.uftrace_cmd = shutil.which('uftrace') or 'uftrace'
        self.default_cflags = list(base.default_cflags)
        # The features some builds ask for (`dwarf`) once, not a `uftrace --version` per test.
        base.test_feature(base)
        base.test_feature = lambda self: True
        # TestBase.__del__ removes the folder TestBase.__init__ made (with `rm -rf`); instantiate()
        # has removed it already.
        base.__del__ = lambda self: None

    def instantiate(self, module):
        """The test's TestCase; the folder TestBase makes and enters is removed at once."""
        cwd = os.getcwd()
        tc = importlib.import_module(module).TestCase()
        os.chdir(cwd)
        shutil.rmtree(tc.test_dir, ignore_errors=True)
        tc.set_debug(False)
        return tc

    def programs(self):
        """{program: (its tests, the argv after the program)}, the first test being the first
        that runs the program directly (`t-NAME args`, without a runcmd() of its own)."""
        tests = collections.defaultdict(list)
        argv = {}
        for path in sorted(glob.glob(os.path.join(self.dir, TEST_GLOB))):
            module = os.path.basename(path)[:-3]
            try:
                tc = self.instantiate(module)
            except Exception as e:  # a test this Python cannot load: say so, go on
                log('note: %s not loaded (%s)' % (module, e))
                continue
            name = tc.name
            tests[name].append(module)
            if name in argv:
                continue
            tc.subcmd, tc.option, tc.exearg = 'live', '', 't-' + name
            try:
                tc.setup()
            except Exception:
                continue
            words = tc.exearg.split()
            if 'runcmd' not in type(tc).__dict__ and words[:1] == ['t-' + name]:
                argv[name] = words[1:]
                tests[name].insert(0, tests[name].pop())  # this test first
        chosen = {}
        for name in sorted(tests):
            if name in argv:
                chosen[name] = (tests[name], argv[name])
            elif name in ARGS_OF:
                chosen[name] = (tests[name], ARGS_OF[name])
            else:
                log('note: %s: no uftrace test runs it directly and ARGS_OF has no arguments for '
                    'it: not compared' % name)
        return chosen

    def source_of(self, name):
        for ext in ('.c', '.cpp'):
            path = os.path.join(self.dir, 's-' + name + ext)
            if os.path.exists(path):
                with open(path, errors='replace') as f:
                    return f.read()
        return ''


def build_program(peers, tests, build, messages):
    """Builds the program in the current folder with its tests' build(): the first whose build
    succeeds, TestBase.build as the last resort. Every compile gets -finstrument-functions: the
    tests that build without it do so because uftrace cannot read arguments there, or to test
    uftrace's dynamic patching (-P) of uninstrumented code; neither matters to call counts.
    Returns what built it."""
    base = peers.runtest.TestBase
    flags = BUILDS[build]
    base.default_cflags = (list(peers.default_cflags) if flags['default_cflags'] is None
                           else list(flags['default_cflags']))
    for key in ('CFLAGS', 'CXXFLAGS', 'LDFLAGS'):  # TestBase adds these to every build
        os.environ.pop(key, None)
    work = os.getcwd()
    for module, use_base in [(t, False) for t in tests] + [(tests[0], True)]:
        tc = peers.instantiate(module)
        os.chdir(work)
        tc.pr_debug = messages.append  # the build commands and the compiler's errors
        tc.set_debug(True)

        def build_it(cmd, tc=tc):
            if '-finstrument-functions' not in cmd.split():
                cmd += ' -finstrument-functions'
            return base.build_it(tc, cmd)
        tc.build_it = build_it
        status = (base.build(tc, tc.name, flags['cflags']) if use_base
                  else tc.build(tc.name, flags['cflags']))
        if status == 0:
            return 'TestBase.build' if use_base else module
    raise RuntimeError('build failed: ' + ' | '.join(messages)[-1500:])


# ---------------------------------------------------------------------------------------------
# Counting
# ---------------------------------------------------------------------------------------------

def plain_name(name):
    """One spelling for both tools: uftrace prints a C function `f` as `f()`, c++filt and hotline
    give C++ names their parameters; `f()` and `f` are one name."""
    name = name.strip()
    return name[:-2] if name.endswith('()') else name


def run(cmd, cwd, out_path, timeout=TIMEOUT_S):
    """Runs cmd in a process group of its own, stdin from /dev/null, output to out_path; kills the
    group on timeout. Returns (exit status, or None on timeout; seconds)."""
    start = time.monotonic()
    with open(out_path, 'wb') as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    return rc, time.monotonic() - start


def hotline_counts(hotline, profiles, work):
    """Exact calls per function and per edge from `hotline export --format json`, summed over the
    profiles (a forked child writes X.PID.hotline beside X.hotline). An edge's calls are exact
    when its callee's are; whether its caller is traced is decided over all the profiles (a forked
    child's `main` has no calls in the child's profile, yet it is traced). One exception: an edge
    from a row that is only sampled while another row of the same name in the profile is traced
    is an estimate, not counted. That is one function under two rows: a program's copy of a
    template that libstdc++ also exports is traced under libstdc++'s row (-finstrument-functions
    passes the address the GOT gives) and sampled under the program's, and a timed-mode sample
    adds an estimated edge from the latter."""
    funcs = collections.Counter()
    edges = collections.Counter()
    inexact = {}
    for i, profile in enumerate(profiles):
        out = os.path.join(work, 'export.%d.json' % i)
        rc, _ = run([hotline, 'export', '--format', 'json', profile, '-o', out], work,
                    out + '.log')
        if rc != 0:
            with open(out + '.log', errors='replace') as f:
                raise RuntimeError('hotline export %s failed: %s' % (profile, f.read().strip()))
        with open(out) as f:
            data = json.load(f)
        fs = data['functions']
        traced_here = {fn['name'] for fn in fs if fn['calls_exact']}
        for fn in fs:
            if fn.get('pseudo'):
                continue
            if fn['calls_exact']:
                funcs[plain_name(fn['name'])] += fn['calls']
            else:
                inexact[plain_name(fn['name'])] = fn['calls']
        for e in data['call_graph']:
            caller, callee = fs[e['caller']], fs[e['callee']]
            if (callee['calls_exact'] and not caller.get('pseudo')
                    and (caller['calls_exact'] or caller['name'] not in traced_here)):
                edges[(plain_name(caller['name']), plain_name(callee['name']))] += e['calls']
    return funcs, edges, inexact


def demangle(names):
    """{mangled: demangled} by c++filt, the standard demangler, as hotline's names are. (uftrace's
    own --demangle=full takes C names for Itanium type codes: `a` -> `signed char`.)"""
    names = sorted(n for n in names if n.startswith('_Z'))
    if not names:
        return {}
    out = subprocess.run(['c++filt'], input='\n'.join(names) + '\n', capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return dict(zip(names, out))


REPLAY_LINE = re.compile(r'^\s*\[\s*(\d+)\]\s\|\s(.*)$')


def replay_nodes(replay_text):
    """[(task, depth, name, `@library` given)] of `uftrace replay -f tid --libname
    --demangle=no`, each node a call; the depth is the indentation (two spaces a level)."""
    nodes = []
    for line in replay_text.splitlines():
        m = REPLAY_LINE.match(line)
        if not m:
            continue
        tid, body = m.group(1), m.group(2)
        stripped = body.lstrip(' ')
        depth = (len(body) - len(stripped)) // 2
        if stripped.endswith(' {'):
            raw, opens = stripped[:-2], True
        elif stripped.endswith(';') and not stripped.startswith('}'):
            raw, opens = stripped[:-1], False
        else:
            continue  # a closing brace, an event, a note
        raw = raw[:-2] if raw.endswith('()') else raw
        name, at, _ = raw.partition('@')
        nodes.append((tid, depth, name, bool(at), opens))
    return nodes


def uftrace_counts(full_replay, traced_replay):
    """Calls per function and per edge of the instrumented code, from two replays of one
    recording: with the library calls uftrace records at the PLT, and with `--no-libcall`.

    The functions and their calls are the --no-libcall replay's (a call into another instrumented
    module is recorded at the PLT and at its target's entry; it counts once). The edges come from
    the full replay's tree, per task: a library call (`name@library`, or a name the --no-libcall
    replay does not have: uftrace's --libname leaves some unnamed) is no caller, as in hotline,
    where the caller of a callback from untraced code is untraced too; a library call's child of
    the same name is the call's own target, whose caller is the library call's caller. A node whose
    caller's level is not in its task's output (a root, or a forked child's inherited frames) has
    no caller."""
    traced = collections.Counter()
    for tid, depth, name, libcall, opens in replay_nodes(traced_replay):
        traced[name] += 1
    nodes = replay_nodes(full_replay)
    demangled = demangle({n[2] for n in nodes} | set(traced))
    funcs = collections.Counter()
    for name, calls in traced.items():
        funcs[plain_name(demangled.get(name, name))] += calls
    edges = collections.Counter()
    stacks = collections.defaultdict(list)  # per task, per level: (name, is a library call)
    for tid, depth, name, libcall, opens in nodes:
        libcall = libcall or name not in traced
        name = plain_name(demangled.get(name, name))
        stack = stacks[tid]
        del stack[depth:]
        stack.extend([None] * (depth - len(stack)))
        if not libcall:
            caller = stack[depth - 1] if depth > 0 else None
            if caller is not None and caller[1] and caller[0] == name:
                caller = stack[depth - 2] if depth > 1 else None  # through the PLT
            if caller is not None and not caller[1]:
                edges[(caller[0], name)] += 1
        if opens:
            stack.append((name, libcall))
    return funcs, edges


def differences(counts, aliases):
    """[(kind, key, hotline, uftrace)] over the instrumented functions: those hotline counts
    exactly and those uftrace traces (a function hotline only sampled shows as `~N`). aliases:
    {hotline's name: uftrace's} for the functions the two name differently; returns the aliases
    that applied too."""
    h, u = counts['hotline'], counts['uftrace']
    applied = {a: b for a, b in aliases.items() if a in h['functions'] and b in u['functions']}
    rename = lambda name: applied.get(name, name)
    hfuncs = collections.Counter()
    for name, calls in h['functions'].items():
        hfuncs[rename(name)] += calls
    hedges = collections.Counter()
    for caller, callee, calls in h['edges']:
        hedges[(rename(caller), rename(callee))] += calls
    ufuncs = u['functions']
    uedges = {(a, b): calls for a, b, calls in u['edges']}
    traced = set(hfuncs) | set(ufuncs)
    out = []
    for name in sorted(traced):
        hc, uc = hfuncs.get(name, 0), ufuncs.get(name, 0)
        if hc != uc:
            if name not in hfuncs and name in h['inexact']:
                hc = '~%s' % h['inexact'][name]
            out.append(('func', name, hc, uc))
    hedges = {k: v for k, v in hedges.items() if k[0] in traced}
    for key in sorted(set(hedges) | set(uedges)):
        hc, uc = hedges.get(key, 0), uedges.get(key, 0)
        if hc != uc:
            out.append(('edge', key, hc, uc))
    return out, applied


# ---------------------------------------------------------------------------------------------
# One program x build (a worker process each: TestBase works in the current folder)
# ---------------------------------------------------------------------------------------------

def compare_one(job):
    peers_dir, scratch, hotline, program, tests, args, build, follow_exec = job
    result = {'program': program, 'build': build, 'error': None, 'modes': {}}
    work = os.path.join(scratch, 'runs', '%s.%s' % (program, build))
    os.makedirs(work, exist_ok=True)
    try:
        peers = Peers(peers_dir, scratch)
        os.chdir(work)
        try:
            result['built_by'] = build_program(peers, tests, build, [])
        except RuntimeError as e:
            if program in UNBUILDABLE:
                result['unbuilt'] = UNBUILDABLE[program]
                return result
            raise
        exe = ['./t-' + program] + list(args)

        udata = os.path.join(work, 'uftrace.data')
        rc, secs = run(['uftrace', 'record', '--no-event', '-d', udata] + exe, work,
                       os.path.join(work, 'uftrace.out'))
        result['uftrace_s'] = secs
        if rc is None:
            raise RuntimeError('uftrace record timed out after %d s' % TIMEOUT_S)
        replays = []
        for name, extra in (('full', []), ('traced', ['--no-libcall'])):
            path = os.path.join(work, 'uftrace.replay.' + name)
            rc, _ = run(['uftrace', 'replay', '--no-pager', '-f', 'tid', '--libname',
                         '--demangle=no', '-d', udata] + extra, work, path)
            with open(path, errors='replace') as f:
                replays.append(f.read())
            if rc != 0:
                raise RuntimeError('uftrace replay failed: ' + replays[-1][-1000:])
        ufuncs, uedges = uftrace_counts(*replays)

        for mode, options in MODES.items():
            hdir = os.path.join(work, 'hotline-' + mode)
            os.makedirs(hdir)
            cmd = [hotline, 'record', '-q', '-o', os.path.join(hdir, 't-%s.hotline' % program)]
            cmd += options + (['--follow-exec'] if follow_exec else [])
            log_path = hdir + '.out'
            rc, secs = run(cmd + ['--'] + exe, work, log_path)
            if rc is None:
                raise RuntimeError('hotline record (%s) timed out after %d s' % (mode, TIMEOUT_S))
            profiles = sorted(glob.glob(os.path.join(hdir, '*.hotline')))
            if not profiles:
                with open(log_path, errors='replace') as f:
                    raise RuntimeError('hotline (%s) wrote no profile: %s' %
                                       (mode, f.read()[-800:]))
            hfuncs, hedges, hinexact = hotline_counts(hotline, profiles, hdir)
            result['modes'][mode] = {
                'seconds': secs,
                'hotline': {'functions': hfuncs, 'inexact': hinexact,
                            'edges': sorted(k + (v,) for k, v in hedges.items())},
                'uftrace': {'functions': ufuncs,
                            'edges': sorted(k + (v,) for k, v in uedges.items())}}
    except Exception as e:
        result['error'] = '%s: %s' % (type(e).__name__, e)
    return result


# ---------------------------------------------------------------------------------------------
# The verdict
# ---------------------------------------------------------------------------------------------

def covers(pattern, value):
    return pattern == '*' or pattern == value or (isinstance(pattern, tuple) and value in pattern)


def applies(entry, program, build, mode):
    return covers(entry[0], program) and covers(entry[1], build) and covers(entry[2], mode)


def matches(entry, kind, key, h, u):
    _, _, _, ekind, ekey, eh, eu, _ = entry
    if ekind == 'either':
        return any(matches(entry[:3] + alternative + entry[7:], kind, key, h, u)
                   for alternative in ekey)
    if ekind != kind or (tuple(ekey) if kind == 'edge' else ekey) != key:
        return False
    return (eh is None or eh == h) and (eu is None or eu == u)


def fmt_key(kind, key):
    if kind == 'either':
        return ' or '.join('%s %s' % (k, fmt_key(k, kk)) for k, kk, _, _ in key)
    if kind == 'func':
        return key
    return ('%s = %s' if kind == 'name' else '%s -> %s') % tuple(key)


def report(results, verbose, started):
    used = set()  # (entry index, build, mode) that matched a difference
    identical = explained = unexplained = failed = 0
    compared = set()
    unbuilt = {}
    worst = {}  # (program, build): 0 identical, 1 differing with reason, 2 without, 3 failed
    for r in results:
        program, build = r['program'], r['build']
        if r.get('unbuilt'):
            unbuilt[program] = r['unbuilt']
            continue
        if r['error']:
            failed += 1
            worst[(program, build)] = 3
            log('FAIL %s %s: %s' % (program, build, r['error']))
            continue
        worst[(program, build)] = 0
        for mode, m in r['modes'].items():
            compared.add((program, build, mode))
            label = '%s %s %s' % (program, build, mode)
            if verbose:
                log('     %s: hotline %s / uftrace %s' % (label, m['hotline'], m['uftrace']))
            entries = [(i, e) for i, e in enumerate(KNOWN_DIFFERENCES)
                       if applies(e, program, build, mode)]
            aliases = {e[4][0]: e[4][1] for i, e in entries if e[3] == 'name'}
            diffs, applied = differences(m, aliases)
            for i, e in entries:
                if e[3] == 'name' and applied.get(e[4][0]) == e[4][1]:
                    used.add((i, program, build, mode))
            if not diffs and not applied:
                identical += 1
                worst[(program, build)] = max(worst[(program, build)], 0)
                log('ok   %s: %d functions identical' %
                    (label, len(set(m['hotline']['functions']) | set(m['uftrace']['functions']))))
                continue
            bad = []
            for kind, key, h, u in diffs:
                hit = [i for i, e in entries if matches(e, kind, key, h, u)]
                if hit:
                    used.add((hit[0], program, build, mode))
                else:
                    bad.append((kind, key, h, u))
            if bad:
                unexplained += 1
                worst[(program, build)] = 2
                log('DIFF %s: %d of %d differences not in the table:' %
                    (label, len(bad), len(diffs) + len(applied)))
                for kind, key, h, u in bad:
                    log('       %-4s %-60s hotline %-5s uftrace %s' %
                        (kind, fmt_key(kind, key), h, u))
            else:
                explained += 1
                worst[(program, build)] = max(worst[(program, build)], 1)
                log('ok   %s: %d differences, each in the table' %
                    (label, len(diffs) + len(applied)))
    stale = []
    for i, e in enumerate(KNOWN_DIFFERENCES):
        for program, build, mode in sorted(compared):
            if applies(e, program, build, mode) and (i, program, build, mode) not in used:
                stale.append((e, program, build, mode))
    for e, program, build, mode in stale:
        log('STALE table entry, no longer differs in %s %s %s: %s %s (hotline %s, uftrace %s)' %
            (program, build, mode, e[3], fmt_key(e[3], e[4]), e[5], e[6]))
    for program, reason in sorted(unbuilt.items()):
        log('note: %s not compared: %s' % (program, reason))
    programs = {r['program'] for r in results} - set(unbuilt)
    pairs = collections.Counter(worst.values())
    log('summary: %d programs x %d builds = %d compared: %d identical, %d differing with reason, '
        '%d differing without, %d failed to run (in both hotline modes: %d identical, %d with '
        'reason, %d without of %d); %d stale table entries; %d programs not built; %.0f s' %
        (len(programs), len(BUILDS), len(worst), pairs[0], pairs[1], pairs[2], pairs[3],
         identical, explained, unexplained, len(compared), len(stale), len(unbuilt),
         time.monotonic() - started))
    return 0 if unexplained == failed == len(stale) == 0 else 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--hotline', required=True, help='the hotline binary')
    ap.add_argument('--peers', default=os.path.join(here, '..', '..', '..', 'shared', 'peers',
                                                    'uftrace-0.13-tests'),
                    help="uftrace 0.13's tests folder (runtest.py, t*.py, s-*.c)")
    ap.add_argument('--jobs', type=int, default=2, help='programs built and recorded at a time')
    ap.add_argument('--only', default='', help='comma-separated programs (default: all)')
    ap.add_argument('--keep', action='store_true', help='keep the scratch folder')
    ap.add_argument('--verbose', action='store_true', help="print each comparison's counts")
    ap.add_argument('--json', help="write every comparison's counts to this file")
    ap.add_argument('--from-json', help='judge the counts a --json run wrote, without running')
    opts = ap.parse_args()

    if opts.from_json:
        with open(opts.from_json) as f:
            return report(json.load(f), opts.verbose, time.monotonic())
    peers_dir = os.path.realpath(opts.peers)
    if not os.path.isfile(os.path.join(peers_dir, 'runtest.py')):
        log('SKIP: no uftrace test suite at %s (runtest.py, t*.py, s-*.c)' % peers_dir)
        return SKIP
    if not shutil.which('uftrace'):
        log('SKIP: uftrace is not installed (scripts/install-deps.sh test installs it)')
        return SKIP
    hotline = os.path.abspath(opts.hotline)
    if not os.access(hotline, os.X_OK):
        log('FAIL: no hotline binary at %s' % hotline)
        return 1

    started = time.monotonic()
    scratch = tempfile.mkdtemp(prefix='hotline-uftrace-')
    try:
        peers = Peers(peers_dir, scratch)
        programs = peers.programs()
        only = [p for p in opts.only.split(',') if p]
        if only:
            programs = {p: v for p, v in programs.items() if p in only}
        # uftrace follows every exec; hotline where asked.
        exec_call = re.compile(r'\b(exec[lv]p?e?|posix_spawnp?|fexecve)\s*\(')
        jobs = [(peers_dir, scratch, hotline, program, tests, args, build,
                 bool(exec_call.search(peers.source_of(program))))
                for program, (tests, args) in sorted(programs.items()) for build in BUILDS]
        log('%d programs x %d builds, recorded by hotline (%s) and %s, %d at a time' %
            (len(programs), len(BUILDS), ', '.join(MODES), shutil.which('uftrace'), opts.jobs))
        with multiprocessing.get_context('fork').Pool(opts.jobs, maxtasksperchild=1) as pool:
            results = pool.map(compare_one, jobs, chunksize=1)
        if opts.json:
            with open(opts.json, 'w') as f:
                json.dump(results, f, indent=1, default=list)
        return report(results, opts.verbose, started)
    finally:
        if opts.keep:
            log('scratch kept in %s' % scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
