"""What a network simulation run becomes for people: the demo, the Swing study, the
report tables and the plots."""

__all__: list[str] = []
