"""cocotb testbenches (``tb_*.py``) and their kit: link models, host traffic, the
configuration loader and the Amaranth wrappers they run on."""
