"""The commands of the Baton keeper: baton score, init, lease, pack, metrics, boot, registry.

Rules:
1. Their handler is `slopd.cli.baton`.
2. Every verb that acts on one vessel takes it last, as `VESSEL`.
"""

from __future__ import annotations

from slopd.cli.parser.options import DEFAULT_CONFIG, JSON, VESSEL, Commands, command, hub_and_state


def add(commands: Commands) -> None:
    text = "the Baton keeper: generational handoffs of one agent lineage"
    baton = commands.add_parser("baton", help=text, description=text)
    verbs = baton.add_subparsers(dest="verb", required=True)
    text = "score a handoff letter with the seed's rubric; exit 1 when it fails the gate"
    sub = command(verbs, "score", "slopd.cli.baton:score", text)
    sub.add_argument("file", metavar="FILE|-", help="the letter (- for stdin)")

    text = "create a vessel's tree, HUB/batons/VESSEL/, at generation 0"
    sub = command(verbs, "init", "slopd.cli.baton:init", text)
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--identity", required=True, metavar="FILE.json", help="the agent's IDENTITY.json")
    sub.add_argument("vessel", metavar="VESSEL", help=VESSEL)

    text = "lease a vessel's next generation: prints {lease_id, expires, generation}; exit 1 while leased"
    sub = command(verbs, "lease", "slopd.cli.baton:lease", text)
    hub_and_state(sub)
    sub.add_argument("--holder", required=True, help="who takes the lease (named to anyone refused)")
    sub.add_argument(
        "--ttl", type=float, default=300.0, metavar="SECS", help="seconds until it expires (300)"
    )
    sub.add_argument("vessel", metavar="VESSEL", help=VESSEL)

    text = "score, gate and commit the next generation with a live lease; prints the score JSON"
    sub = command(verbs, "pack", "slopd.cli.baton:pack", text)
    hub_and_state(sub)
    sub.add_argument("--lease", required=True, metavar="ID", help="the live lease's id (slopd baton lease)")
    sub.add_argument("--letter", required=True, metavar="F", help="the handoff letter (Markdown)")
    sub.add_argument("--state-file", required=True, metavar="F", help="the generation's STATE.json")
    sub.add_argument("--intentions", metavar="F", help="INTENTIONS.json")
    sub.add_argument("--context", metavar="F", help="CONTEXT.json")
    text = "commit a letter that fails the gate, marked LOW_QUALITY"
    sub.add_argument("--accept-low-quality", action="store_true", help=text)
    sub.add_argument("--config", help=DEFAULT_CONFIG + "; its [baton.summarizer] writes AUTOBIOGRAPHY.md")
    sub.add_argument("vessel", metavar="VESSEL", help=VESSEL)
    _reading(verbs)


def _reading(verbs: Commands) -> None:
    text = "the seed's metrics table, one row per generation, from evolution/fitness_history.json"
    sub = command(verbs, "metrics", "slopd.cli.baton:metrics", text)
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--json", action="store_true", help=JSON)
    sub.add_argument("--plot", metavar="FILE.png", help="draw the metrics too (needs the slopd[plot] extra)")
    sub.add_argument("vessel", metavar="VESSEL", help=VESSEL)

    text = "what the next generation reads: GENERATION's state and letter, then what the budget allows"
    sub = command(verbs, "boot", "slopd.cli.baton:boot", text)
    hub_and_state(sub)
    sub.add_argument(
        "--budget", type=int, metavar="TOKENS", help="tokens (characters / 4) for IDENTITY and L1"
    )
    sub.add_argument("--json", action="store_true", help=JSON)
    sub.add_argument("vessel", metavar="VESSEL", help=VESSEL)

    text = "every vessel of the hub: GENERATION, live lease, last boot, last score"
    sub = command(verbs, "registry", "slopd.cli.baton:registry", text)
    hub_and_state(sub)
    sub.add_argument("--json", action="store_true", help=JSON)
