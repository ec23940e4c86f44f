# argmin and argmax with keepdim
from tinygrad import Tensor
x = Tensor([[4.0, 1.0, 3.0], [2.0, 9.0, -1.0]]).realize()
RESULT = {"amin": x.argmin(axis=1).tolist(), "amax_k": x.argmax(axis=0, keepdim=True).tolist()}
print(RESULT)
