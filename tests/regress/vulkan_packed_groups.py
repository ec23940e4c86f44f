# devices: VULKAN CPU
# Small work groups packed into larger Vulkan ones (glsl_group_packing), which keeps at least 1,024 packed groups:
# E_8195_32_4 has 8,195 work groups of 32 lanes, run as 1,025 of 256 with the last one mostly empty, so the guard on
# the packed group index is exercised; every element is checked against its hand-computed value. Beside it, grids too
# small to pack (5 groups of 32 lanes) and a ragged multi-dimension kernel.
from tinygrad import Tensor
n = 8195 * 128
w = (Tensor.arange(n) * 2 + 1).tolist()
print(all(v == 2 * i + 1 for i, v in enumerate(w)), len(w))
x = Tensor([float(i) for i in range(640)])
y = (x * 2 + 1).tolist()
print(all(v == 2 * i + 1 for i, v in enumerate(y)), len(y))
m = Tensor([[float(i * 7 + j) for j in range(7)] for i in range(300)])
z = (m * 3 - 1).tolist()
print(all(z[i][j] == 3 * (i * 7 + j) - 1 for i in range(300) for j in range(7)), len(z))
