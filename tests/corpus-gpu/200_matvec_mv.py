# matrix-vector products: the mat-vec heuristic (GROUP 8 of the reduce, LOCAL 4 and UPCAST 4 of the rows)
from tinygrad import Tensor
A = Tensor([[((i * 7 + j * 3) % 11) / 4.0 for j in range(32)] for i in range(64)]).realize()
v = Tensor([((j * 5) % 7) / 2.0 - 1.0 for j in range(32)]).realize()
w = Tensor([((j * 3) % 5) / 3.0 for j in range(64)]).realize()
mv = (A @ v).tolist()
vm = (w @ A).tolist()
RESULT = {"mv": mv, "vm": vm}
print(RESULT)
