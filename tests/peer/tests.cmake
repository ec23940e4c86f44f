# The peer suite (tests/peer/test_peer.cpp): tinygrad's own tests from ../shared/peer on CPU (test_peer) and on Vulkan
# through lavapipe (test_peer_vulkan), each in worker processes of `tinyscope run`, compared with the reference.
ts_add_cli_test(test_peer SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_peer.cpp LIBS Qt6::Core TIMEOUT 1800)
set_property(TEST test_peer APPEND PROPERTY ENVIRONMENT "PEER_DEVICE=CPU;QTEST_FUNCTION_TIMEOUT=1800000")
math(EXPR TS_PEER_TIMEOUT "1800 * ${TS_TEST_TIMEOUT_SCALE}")
add_test(NAME test_peer_vulkan COMMAND test_peer)
set_tests_properties(test_peer_vulkan PROPERTIES TIMEOUT ${TS_PEER_TIMEOUT}
                     ENVIRONMENT "${TS_TEST_ENV};PEER_DEVICE=VULKAN;QTEST_FUNCTION_TIMEOUT=1800000")
# and on NULL (test_peer_null): kernels rendered, nothing run, compared with the reference run on its NULL device
# (tests/peer/reference-outcomes-NULL, recorded with `run_peer.py --record ... --device NULL`)
add_test(NAME test_peer_null COMMAND test_peer)
set_tests_properties(test_peer_null PROPERTIES TIMEOUT ${TS_PEER_TIMEOUT}
                     ENVIRONMENT "${TS_TEST_ENV};PEER_DEVICE=NULL;QTEST_FUNCTION_TIMEOUT=1800000")
