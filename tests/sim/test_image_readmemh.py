"""The hex encoding loads with Verilog's $readmemh (Verilator through innet.sim.runner)."""

import numpy as np
import pytest
from image_samples import sample

from innet.gen.image import encode
from innet.hw.verilog import Design
from innet.sim import runner

ROM = """
module innet_test_image_rom (
    input  wire        clk,
    input  wire        rst,
    input  wire [11:0] addr,
    output wire [31:0] data
);
    reg [31:0] mem [0:4095];
    initial $readmemh("image.hex", mem);
    assign data = mem[addr];
endmodule
"""


@pytest.mark.rtl
def test_readmemh_loads_the_hex_image(tmp_path):
    image = sample()
    words = np.frombuffer(encode(image), dtype="<u4").tolist()
    assert len(words) <= 4096
    (tmp_path / "image.hex").write_text(encode(image, "hex"))
    result = runner.run(Design(ROM, "innet_test_image_rom"), "innet.sim.tb.tb_readmemh",
                        params={"words": words}, workdir=tmp_path)
    assert result.ntests == 1
    assert result.output == {"checked": len(words), "wrong": []}
