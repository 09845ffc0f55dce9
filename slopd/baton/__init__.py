"""The Baton keeper (SPEC §11): generational handoffs of one agent lineage."""
