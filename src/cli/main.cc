#include "cli/cli.h"

int main(int argc, char** argv) { return hotline::cli::RunCli(argc, argv); }
