#include "test.h"
int main(void) { return 77; }
