# integer clamp and minimum as index math: clipped arange gathers, nearest interpolate of other sizes, int minimum
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 4.0, 8.0], [3.0, 0.0, -1.0, 5.0], [2.0, 2.5, 3.5, 7.0]]).realize()
a = Tensor([5, -3, 12, 7, 0]).realize()
RESULT = {
  "iclip": a.clip(0, 6).tolist(), "imin": a.minimum(Tensor([4, 4, 4, 9, -1])).tolist(),
  "near": x.reshape(1, 1, 3, 4).interpolate((5, 3), mode="nearest").tolist(),
  "lin": x.reshape(1, 1, 3, 4).interpolate((2, 6)).tolist(),
  "gather_clip": x[Tensor.arange(4).clip(0, 2)].tolist(),
}
print(RESULT)
