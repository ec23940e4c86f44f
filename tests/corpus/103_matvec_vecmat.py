# 1-d matmul operands and a dot of vectors
from tinygrad import Tensor
m = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
v = Tensor([1.0, -1.0, 2.0]).realize()
u = Tensor([0.5, 2.0]).realize()
RESULT = {"mv": (m @ v).tolist(), "um": (u @ m).tolist(), "dot": v.dot(v).item()}
print(RESULT)
