# Regression tests for what the fuzz targets found (docs/FUZZING.md): each restates one failing
# fuzz input as a readable test; the input itself stays in fuzz/corpus/<target>/.
retcon_add_test(fuzz_regression_tests
  ${CMAKE_CURRENT_LIST_DIR}/desync_after_disconnect_test.cpp)
