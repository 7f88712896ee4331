#!/usr/bin/env node
// `kubectl policy-sync …`: kubectl runs the executable named kubectl-policy_sync found on PATH (a dash in a
// plugin's name is written `_`). The same program as bin/policy-sync.js; it names itself after the file.
import './policy-sync.js';
