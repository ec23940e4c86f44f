# error: the devices are CPU, CPU:LLVM, INTERP, INTERP:GPU
# devices: CUDA GPU METAL VULKAN:7
# DEV naming no device is an error before anything runs (VULKAN:7: a Vulkan device index this machine does not have)
print("ran")
