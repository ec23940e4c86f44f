# interpolate: linear (align_corners False/True) and nearest
from tinygrad import Tensor
x = Tensor([[[[1.0, 2.0, 4.0], [3.0, 0.0, -1.0]]]]).realize()
RESULT = {"lin": x.interpolate((4, 5)).tolist(), "lin_ac": x.interpolate((3, 4), align_corners=True).tolist(),
          "nearest": x.interpolate((4, 6), mode="nearest").tolist()}
print(RESULT)
