# devices: VULKAN CPU
# Small work groups packed into larger Vulkan ones (glsl_group_packing): E_5_32_4 has 5 work groups of 32 lanes, run
# as 2 of 128 with the last half-empty, so the guard on the packed group index is exercised; every element is checked
# against its hand-computed value, and a ragged multi-dimension kernel beside it.
from tinygrad import Tensor
x = Tensor([float(i) for i in range(640)])
y = (x * 2 + 1).tolist()
print(all(v == 2 * i + 1 for i, v in enumerate(y)), len(y))
m = Tensor([[float(i * 7 + j) for j in range(7)] for i in range(300)])
z = (m * 3 - 1).tolist()
print(all(z[i][j] == 3 * (i * 7 + j) - 1 for i in range(300) for j in range(7)), len(z))
