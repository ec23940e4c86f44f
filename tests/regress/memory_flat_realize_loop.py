# devices: CPU
# sanitized: skip an RSS bound: AddressSanitizer keeps freed memory in quarantine and shadow memory on top
# timeout: 300
# 200,000 realizes of a small kernel keep memory flat (once ~3 KB a realize: schedule, call and trace records)
import resource
from tinygrad import Tensor
a = Tensor([1.0, 2.0]).realize()
for i in range(200000):
  a = (a + 1).realize()
  if i == 1000: start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(a.tolist())
print("under 300 MB:", peak < 300 * 1024, "| grew under 20 MB after warm-up:", peak - start < 20 * 1024)
