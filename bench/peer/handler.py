"""The naive peer's handler: run by `watchmedo shell-command` once per event.

    python handler.py EVENT_TYPE SRC_PATH DEST_PATH

Reads the file, parses its front matter with PyYAML, writes `outbox/ID.result.md` and moves the
input into `archive/`, the way a user would script it: `yaml.safe_load`, a plain write, `shutil.move`.
A file that is gone (already handled) or does not parse yet (still being written) is left alone.
In `authorized/` it also does what slopd does for an order: verify the Ed25519 SSHSIG in
`NAME.sig` against the keys in `$PEER_ALLOWED_SIGNERS` and, when the order names an action, run
`$PEER_ACTION` with the envelope as JSON on stdin.
"""

import base64
import datetime
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys

import yaml


def ssh_string(data, at):
    length = int.from_bytes(data[at : at + 4], "big")
    return data[at + 4 : at + 4 + length], at + 4 + length


def verified(message, armored):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey  # noqa: PLC0415

    keys = set()
    with open(os.environ.get("PEER_ALLOWED_SIGNERS", "/dev/null"), encoding="utf-8") as signers:
        for line in signers:
            fields = line.split()
            if len(fields) >= 3 and fields[1] == "ssh-ed25519":
                blob = base64.b64decode(fields[2])
                keys.add(ssh_string(blob, ssh_string(blob, 0)[1])[0])
    blob = base64.b64decode(b"".join(armored.strip().split(b"\n")[1:-1]))
    key_blob, at = ssh_string(blob, 10)
    namespace, at = ssh_string(blob, at)
    _reserved, at = ssh_string(blob, at)
    hash_name, at = ssh_string(blob, at)
    signature_blob, at = ssh_string(blob, at)
    public_key = ssh_string(key_blob, ssh_string(key_blob, 0)[1])[0]
    signature = ssh_string(signature_blob, ssh_string(signature_blob, 0)[1])[0]
    if public_key not in keys:
        return False

    def pack(value):
        return len(value).to_bytes(4, "big") + value

    digest = hashlib.new(hash_name.decode(), message).digest()
    signed = b"SSHSIG" + pack(namespace) + pack(b"") + pack(hash_name) + pack(digest)
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, signed)
    except Exception:
        return False
    return True


def main():
    event, src, dest = sys.argv[1:4]
    path = dest if event == "moved" else src
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as source:
        data = source.read()
    text = data.decode("utf-8")
    if not text.startswith("---"):
        return 1
    try:
        _, front, body = text.split("---\n", 2)
        meta = yaml.safe_load(front)
    except (ValueError, yaml.YAMLError):
        return 1
    if not isinstance(meta, dict) or "id" not in meta:
        return 1
    lane_dir = os.path.dirname(path)
    hub = os.path.dirname(lane_dir)
    reply_text = f"Received {meta['id']}.\n"
    if os.path.basename(lane_dir) == "authorized":
        with open(path + ".sig", "rb") as sidecar:
            armored = sidecar.read()
        if not verified(data, armored):
            reply_text = "Bad signature; nothing was run.\n"
        elif meta.get("action"):
            order = json.dumps({**meta, "body": body}, default=str)
            run = subprocess.run(
                shlex.split(os.environ["PEER_ACTION"]), input=order.encode(), capture_output=True, check=False
            )
            reply_text = run.stdout.decode() or "(no output)\n"
        shutil.move(path + ".sig", os.path.join(hub, "archive", os.path.basename(path) + ".sig"))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    reply = (
        f"---\nprotocol: slop.v1\nid: {meta['id']}.result\ntype: result\nfrom: watcher:peer\n"
        f"to: {meta.get('from')}\nin_reply_to: {meta['id']}\ncreated_at: {now}\nauth: none\n---\n{reply_text}"
    )
    with open(os.path.join(hub, "outbox", f"{meta['id']}.result.md"), "w", encoding="utf-8") as out:
        out.write(reply)
    os.makedirs(os.path.join(hub, "archive"), exist_ok=True)
    shutil.move(path, os.path.join(hub, "archive", os.path.basename(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
