#!/usr/bin/env python3
"""hotline's Perl profiler against NYTProf, on Devel::NYTProf 6.12's own test scripts (issue 31).

Every script of the peer suite (../shared/peers/nytprof-6.12-t: test*.p) is run plain, under
`hotline record` (which loads Devel::Hotline) and under Debian's Devel::NYTProf, in a copy of the
suite's folder. hotline must leave the script's output and exit status as they were; then the
statements per line of the script's own files (the script, its string evals, the files next to
it), the calls per sub and the calls per caller -> callee pair are compared with what NYTProf
counted (read by tests/nytprof/nytprof_dump.pl through Devel::NYTProf::Data).

Every difference must be in KNOWN_DIFFERENCES below, with who is right and why; a script that
cannot be compared is in NOT_COMPARED with the reason. The test fails on a difference that is not
there and on an entry that no longer differs. It exits 77 (ctest's SKIP_RETURN_CODE) when the peer
folder or Devel::NYTProf is missing.

  compare_with_nytprof.py --hotline build/bin/hotline --perl-lib build/frontends/perl/lib
                          [--peers DIR] [--only test01,test13] [--keep] [--verbose]
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
TIMEOUT_S = 120

# Real programs, compared as the scripts are but in every file they run (perl's library too):
# Debian's perltidy on a large module, pod2man on perl's largest pod.
REAL_PROGRAMS = {
    'perltidy': ['/usr/bin/perltidy', '-st', '-se', '-npro', '/usr/share/perl/5.36/CPAN.pm'],
    'pod2man': ['/usr/bin/pod2man', '/usr/share/perl/5.36/pod/perldiag.pod'],
}

# Scripts whose counts cannot be compared, and why. They still run under hotline, which must
# leave their output and exit status as they were.
NOT_COMPARED = {
    'test50-disable': "drives NYTProf's own run-time API (DB::disable_profile, "
                      'DB::enable_profile); hotline has its own (Devel::Hotline::stop/start)',
    'test51-enable': "drives NYTProf's own run-time API (DB::enable_profile, with a new output "
                     'file); hotline has its own (Devel::Hotline::start)',
}

# ---------------------------------------------------------------------------------------------
# The known differences: (script, kind, key, hotline, nytprof, reason).
#   script: a script's name without .p, or a tuple of them, or '*'.
#   kind 'line': key (file, line) as compared (see site()); hotline and nytprof the statements.
#   kind 'sub': key the sub's name; hotline and nytprof the calls.
#   kind 'edge': key (caller, callee); hotline and nytprof the calls.
#   kind 'lines' / 'subs' / 'edges': key a regex (of the file, of the sub, of "caller > callee"):
#     every differing entry that matches.
#   hotline, nytprof: None where any count matches.
# ---------------------------------------------------------------------------------------------
COMPILED_BEFORE_NYTPROF = (
    'hotline right: NYTProf counts no call made from code perl compiled before NYTProf loaded '
    '(it hooks PL_ppaddr, which an op copies when it is compiled), and it loads strict.pm and '
    'XSLoader.pm first: strict::import and unimport call &bits (strict.pm says so), '
    'XSLoader::load calls DynaLoader and the module\'s bootstrap; hotline runs every op through '
    'its own runops loop')
NYTPROF_LOADED_ALREADY = (
    'not comparable: the script loads Devel::NYTProf::Test, which loads Devel::NYTProf::Core; '
    'under NYTProf that module is loaded already (it is the profiler), under hotline the script '
    'loads it, and its BEGIN blocks and XSLoader::load run')
KNOWN_DIFFERENCES = [
    ('*', 'subs', r'strict::bits|DynaLoader::.*|[A-Za-z0-9:]+::bootstrap', None, 0,
     COMPILED_BEFORE_NYTPROF),
    ('*', 'edges', r'strict::(un)?import > strict::bits|XSLoader::load > .*', None, 0,
     COMPILED_BEFORE_NYTPROF),
    (('perltidy', 'pod2man'), 'lines', r'.*/perl-base/(strict|XSLoader)\.pm', None, 0,
     COMPILED_BEFORE_NYTPROF),
    ('perltidy', 'edges', r'(Perl::Tidy::BEGIN@103|Fcntl::O_[A-Z]+) > File::Temp::__ANON__.*',
     None, None,
     'both right, two views: File::Temp calls the Fcntl constants the system lacks by name in '
     'an eval with a $SIG{__DIE__} handler; perl calls the handler while it dies on the call. '
     'NYTProf takes the handler\'s caller to be the constant it could not enter; hotline, the '
     'code that made the call (its calls of the constants agree)'),
    ('pod2man', 'edges', r'Pod::Man::(CORE:subst|format_text|guesswork) > '
     r'Pod::Simple::BlackBox::stringify_lol', None, None,
     'both right, two views: the calls are made by the replacement code of an s///e in '
     'format_text and guesswork, which runs after the subst op has returned; NYTProf charges '
     'them to CORE:subst, hotline to the sub whose code makes them (their sum agrees)'),
    (('test60-subname', 'test62-subcaller1-a', 'test62-subcaller1-b'), 'subs',
     r'Devel::NYTProf::.*|XSLoader::load', None, 0, NYTPROF_LOADED_ALREADY),
    (('test60-subname', 'test62-subcaller1-a', 'test62-subcaller1-b'), 'edges',
     r'.* > (Devel::NYTProf::.*|XSLoader::load)', None, 0, NYTPROF_LOADED_ALREADY),
]


# NYTProf names the caller of what perl runs while it compiles the main program (its BEGIN
# blocks, `use`) main::NULL; hotline names it main, NYTProf's main::RUNTIME. Compared as one.
CALLER_NAMES = {'main::NULL': 'main::RUNTIME'}


def log(msg):
    print(msg, flush=True)


def site(path, work):
    """A file as compared: relative to the suite's folder; a string eval as its call site
    (NYTProf merges the evals of one call site that have the same source)."""
    m = re.match(r'^\(eval \d+\)\[(.*)\]$', path)
    if m:
        return '(eval)[%s]' % site(m.group(1), work)
    if path.startswith(work + '/'):
        return path[len(work) + 1:]
    return path


def sub_name(name, work):
    """A sub as compared: an anonymous sub of a string eval under its eval's call site (NYTProf
    merges the evals of one call site that have the same source, hotline keeps them apart:
    docs/perl.md), paths relative to the suite's folder."""
    name = name.replace(work + '/', '')
    while True:
        merged = re.sub(r'\(eval \d+\)', '(eval)', name)
        if merged == name:
            return CALLER_NAMES.get(name, name)
        name = merged


def ours(path, work, every_file=False):
    """The suite's own files and their string evals, not perl's library (every file for a real
    program)."""
    return every_file or site(path, work).startswith(('(eval)[test', 'test', 't/', 'lib/')) or \
        not site(path, work).startswith('/')


def run(argv, cwd, env=None):
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT_S)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, b'', b'timed out'


def hotline_counts(args, work, profile, every_file):
    json_path = profile + '.json'
    rc, _, err = run([args.hotline, 'export', '-f', 'json', '-o', json_path, profile], work)
    if rc != 0:
        raise RuntimeError('hotline export: ' + err.decode(errors='replace'))
    with open(json_path) as f:
        data = json.load(f)
    files = [f['path'] for f in data['files']]
    functions = data['functions']
    name = ['main::RUNTIME' if f['name'] == 'main' else sub_name(f['name'], work)
            for f in functions]
    lines, subs, edges = {}, {}, {}
    for line in data['lines']:
        if (line['count'] and line['count_exact'] and line['file'] is not None and
                not data['files'][line['file']]['pseudo']):
            path = files[line['file']]
            if ours(path, work, every_file):
                key = (site(path, work), line['line'])
                lines[key] = lines.get(key, 0) + line['count']
    for i, f in enumerate(functions):
        if f['calls'] and f['name'] != 'main':
            subs[name[i]] = subs.get(name[i], 0) + f['calls']
    for e in data['call_graph']:
        if e['calls']:
            key = (name[e['caller']], name[e['callee']])
            edges[key] = edges.get(key, 0) + e['calls']
    return lines, subs, edges


def nytprof_counts(work, profile, every_file):
    dump = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'nytprof_dump.pl')
    rc, out, err = run(['perl', dump, profile], work)
    if rc != 0:
        raise RuntimeError('nytprof_dump.pl: ' + err.decode(errors='replace'))
    data = json.loads(out)
    lines = {}
    for path, by_line in data['lines'].items():
        if ours(path, work, every_file):
            for line, n in by_line.items():
                key = (site(path, work), int(line))
                lines[key] = lines.get(key, 0) + n
    subs, edges = {}, {}
    for name, n in data['subs'].items():
        subs[sub_name(name, work)] = subs.get(sub_name(name, work), 0) + n
    for key, n in data['edges'].items():
        callers, callee = key.split('\t')
        callers = sorted({sub_name(c, work) for c in callers.split('|')})
        edge = (callers[0] if len(callers) == 1 else '|'.join(callers), sub_name(callee, work))
        edges[edge] = edges.get(edge, 0) + n
    return lines, subs, edges


def differences(a, b):
    return sorted((k, a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)
                  if a.get(k, 0) != b.get(k, 0))


def compare(args, work, name, command, every_file=False):
    # The scripts load their modules from their own folder, as NYTProf's harness runs them;
    # hashes are walked in one order in every run (a loop over keys that stops early runs as
    # many statements each time).
    env = dict(os.environ, PERL5LIB=work, PERL_HASH_SEED='0', PERL_PERTURB_KEYS='0')
    env.pop('NYTPROF', None)
    plain = run(command, work, env)
    profile = os.path.join(work, name + '.hotline')
    hot_env = dict(env, PERL5LIB=args.perl_lib + ':' + work)
    hot = run([args.hotline, 'record', '-q', '-o', profile, '--'] + command, work, hot_env)
    result = {'script': name, 'problems': [], 'diffs': []}
    if hot[0] != plain[0] or hot[1] != plain[1]:
        result['problems'].append('hotline changed the output or exit status (plain %s, hotline '
                                  '%s): %s' % (plain[0], hot[0], hot[2].decode(errors='replace')))
        return result
    if name in NOT_COMPARED:
        return result
    if plain[0] != 0:
        result['problems'].append('the script fails without hotline: %s' %
                                  plain[2].decode(errors='replace').strip())
        return result
    nyt_out = os.path.join(work, name + '.nytprof')
    perl_command = command if command[0] == 'perl' else ['perl'] + command
    nyt = run([perl_command[0], '-d:NYTProf'] + perl_command[1:], work,
              dict(env, NYTPROF='file=' + nyt_out))
    if nyt[0] is None or not os.path.exists(nyt_out):
        result['problems'].append('NYTProf did not run: %s' % nyt[2].decode(errors='replace'))
        return result
    h = hotline_counts(args, work, profile, every_file)
    n = nytprof_counts(work, nyt_out, every_file)
    # A line whose calls came from several subs gives NYTProf one count for all of them (a
    # `goto &sub` line run by two callers): hotline's edges of those callers are added up.
    for callers, callee in [k for k in n[2] if '|' in k[0]]:
        merged = sum(h[2].pop((c, callee), 0) for c in callers.split('|'))
        if merged:
            h[2][(callers, callee)] = h[2].get((callers, callee), 0) + merged
    for kind, a, b in zip(('line', 'sub', 'edge'), h, n):
        result['diffs'] += [(kind, k, x, y) for k, x, y in differences(a, b)]
        result.setdefault('compared', []).append(len(set(a) | set(b)))
    return result


def applies(entry, script):
    s = entry[0]
    return s == '*' or s == script or (isinstance(s, tuple) and script in s)


def explained(entry, kind, key, hot, nyt):
    _, ekind, ekey, ehot, enyt, _ = entry
    counts = (ehot is None or ehot == hot) and (enyt is None or enyt == nyt)
    if ekind == kind:
        return ekey == key and counts
    if ekind == kind + 's':
        text = {'line': lambda: key[0], 'sub': lambda: key, 'edge': lambda: '%s > %s' % key}[kind]()
        return re.fullmatch(ekey, text) is not None and counts
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument('--hotline', required=True)
    parser.add_argument('--perl-lib', required=True)
    parser.add_argument('--peers', default=os.path.join(here, '../../../shared/peers/'
                                                        'nytprof-6.12-t'))
    parser.add_argument('--only', default='')
    parser.add_argument('--keep', action='store_true')
    parser.add_argument('--verbose', action='store_true')
    args = parser.parse_args()
    args.hotline = os.path.abspath(args.hotline)
    args.perl_lib = os.path.abspath(args.perl_lib)
    scripts = sorted(glob.glob(os.path.join(args.peers, 'test*.p')))
    if not scripts:
        log('skipped: no test*.p in %s' % args.peers)
        return SKIP
    if run(['perl', '-MDevel::NYTProf::Data', '-e', '1'], '/')[0] != 0:
        log('skipped: Devel::NYTProf is not installed (Debian libdevel-nytprof-perl)')
        return SKIP
    only = set(filter(None, args.only.split(',')))
    work = tempfile.mkdtemp(prefix='hotline-nytprof-')
    try:
        suite = os.path.join(work, 't')
        shutil.copytree(args.peers, suite)
        results = []
        for script in scripts:
            name = os.path.basename(script)[:-2]
            if only and name not in only:
                continue
            results.append(compare(args, suite, name, ['perl', os.path.join(suite, name + '.p')]))
        for name, command in REAL_PROGRAMS.items():
            if only and name not in only:
                continue
            if not os.path.exists(command[0]) or not os.path.exists(command[-1]):
                log('note: %s not compared: %s is not installed' % (name, command[0]))
                continue
            results.append(compare(args, suite, name, command, every_file=True))
        return report(results)
    finally:
        if args.keep:
            log('kept ' + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(results):
    failed = False
    used = set()
    identical = with_reason = 0
    for r in results:
        name = r['script']
        for problem in r['problems']:
            log('FAIL %s: %s' % (name, problem))
            failed = True
        if r['problems']:
            continue
        if name in NOT_COMPARED:
            log('not compared %s: %s' % (name, NOT_COMPARED[name]))
            continue
        unexplained = []
        for kind, key, hot, nyt in r['diffs']:
            hits = [i for i, e in enumerate(KNOWN_DIFFERENCES)
                    if applies(e, name) and explained(e, kind, key, hot, nyt)]
            if hits:
                used.update((i, name) for i in hits)
            else:
                unexplained.append((kind, key, hot, nyt))
        if unexplained:
            failed = True
            log('DIFF %s:' % name)
            for kind, key, hot, nyt in unexplained:
                log('     %-4s %-70s hotline %-6s nytprof %s' % (kind, key, hot, nyt))
        elif r['diffs']:
            with_reason += 1
            log('ok   %s: %d differences, each in the table (of %d lines, %d subs, %d edges)' %
                ((name, len(r['diffs'])) + tuple(r['compared'])))
        else:
            identical += 1
            log('ok   %s: identical (%d lines, %d subs, %d edges)' % ((name,) + tuple(r['compared'])))
    compared = {r['script'] for r in results if not r['problems']}
    for i, e in enumerate(KNOWN_DIFFERENCES):
        for name in sorted(compared):
            if applies(e, name) and e[0] != '*' and (i, name) not in used:
                log('STALE table entry, no longer differs in %s: %s %s' % (name, e[1], e[2]))
                failed = True
    log('summary: %d scripts: %d identical, %d differing with reason, %d not compared' %
        (len(results), identical, with_reason, len([r for r in results
                                                    if r['script'] in NOT_COMPARED])))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
