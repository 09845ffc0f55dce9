"""`slopd status` lists the orders in `authorized/` still waiting for signatures, and which (SPEC §6).

No daemon is needed: status reads the lane itself, so a human on any machine sees which
co-signer has not signed yet.
"""

from __future__ import annotations

from tests.conftest import HubDir, envelope_text
from tests.e2e.signing.test_orders import status_json


def quorum_order(ident: str, sidecars: str) -> str:
    return envelope_text(
        "Release 2.0.\n", id=ident, type="instigate", action="release", auth=f"signed:{sidecars}"
    )


def test_status_names_each_missing_signature_of_each_held_order(hub: HubDir) -> None:
    """o1 has its first sidecar but not bob's; o2 has both; o3 is not an envelope and lacks
    `o3.md.sig`: o1 and o3 are held, each naming what is missing; o2 is waiting to be read."""
    hub.drop("o1.md", quorum_order("o-1", "o1.md.sig,o1.md.bob.sig"), lane="authorized")
    hub.drop("o1.md.sig", "sig\n", lane="authorized")
    hub.drop("o2.md", quorum_order("o-2", "o2.md.sig,o2.md.bob.sig"), lane="authorized")
    hub.drop("o2.md.sig", "sig\n", lane="authorized")
    hub.drop("o2.md.bob.sig", "sig\n", lane="authorized")
    hub.drop("o3.md", "no front matter\n", lane="authorized")
    lanes = status_json(hub)["lanes"]["authorized"]
    assert lanes["held"] == ["o1.md", "o3.md"]
    assert lanes["missing"] == {"o1.md": ["o1.md.bob.sig"], "o3.md": ["o3.md.sig"]}
    assert lanes["waiting"] == ["o2.md"]
    text = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state)).stdout
    assert "o1.md  (held: waiting for o1.md.bob.sig)" in text
    assert "2 held (waiting for signatures)" in text
