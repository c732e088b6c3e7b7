# `make install PREFIX=P` (cmake --install): the binary, the Python plugin beside it, the exporter
# and the suites, the docs. The binary finds its parts relative to itself
# (src/zoobench/util/install_layout.h), so the prefix can move as a whole; LibTorch and Python
# stay where they were found (their folders are in the installed binary's RPATH).
install(TARGETS zoobench RUNTIME DESTINATION bin)
if(TARGET zoobench_python_plugin)
  install(TARGETS zoobench_python_plugin LIBRARY DESTINATION lib/zoobench)
endif()
install(DIRECTORY suites/ DESTINATION share/zoobench/suites)
install(DIRECTORY tools/ DESTINATION share/zoobench/tools
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY docs/ DESTINATION share/doc/zoobench)
install(FILES README.md DESTINATION share/doc/zoobench)
