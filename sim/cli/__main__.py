"""``python -m innet.sim.cli`` runs the ``innet`` command."""

from innet.sim.cli import main

main()
