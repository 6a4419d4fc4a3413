"""Verifies DKIM signatures with dkimpy (Debian's python3-dkim), for the DKIM verifier test.

Usage: /usr/bin/python3 dkimpy-verify.py KEYS.json MESSAGE...
KEYS.json maps "<selector>._domainkey.<domain>" to the TXT record text a DNS server would
publish; dkimpy's dnsfunc reads it from there instead of DNS. Prints one JSON line per message:
{"file": ..., "results": [{"a": "rsa-sha256", "pass": true}, ...]} in header order, or
{"file": ..., "error": "..."} for a message dkimpy refuses to parse.
"""
import json
import re
import sys

import dkim

records = json.load(open(sys.argv[1]))


def dnsfunc(name, timeout=5):
    key = (name.decode() if isinstance(name, bytes) else name).rstrip('.').lower()
    return records.get(key, '').encode()


for path in sys.argv[2:]:
    message = open(path, 'rb').read()
    try:
        verifier = dkim.DKIM(message)
    except dkim.MessageFormatError as error:
        print(json.dumps({'file': path, 'error': str(error)}), flush=True)
        continue
    signatures = [value for name, value in verifier.headers if name.lower() == b'dkim-signature']
    results = []
    for index, value in enumerate(signatures):
        algorithm = re.search(rb'\ba=\s*([\w-]+)', value)
        try:
            passed, reason = bool(verifier.verify(idx=index, dnsfunc=dnsfunc)), None
        except dkim.DKIMException as error:
            passed, reason = False, str(error)
        results.append({'a': algorithm.group(1).decode() if algorithm else None, 'pass': passed, 'reason': reason})
    print(json.dumps({'file': path, 'results': results}), flush=True)
