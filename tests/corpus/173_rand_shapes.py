# seeded rand of several shapes: the bits kernel splits the flat output at the stack boundary
from tinygrad import Tensor
Tensor.manual_seed(7)
RESULT = {"r23": Tensor.rand(2, 3).tolist(), "r52": Tensor.rand(5, 2).tolist(), "r7": Tensor.rand(7).tolist(),
          "r222": Tensor.rand(2, 2, 2).tolist(), "u": Tensor.uniform(3, 3, low=-2.0, high=2.0).tolist()}
print(RESULT)
