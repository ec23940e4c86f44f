# padding rows of a realized 3x3 (masked small axis)
from tinygrad import Tensor
t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]).realize()
RESULT = {"p": t.pad(((1, 1), (0, 0))).tolist(), "pc": t.pad(((0, 0), (2, 0))).tolist()}
print(RESULT)
