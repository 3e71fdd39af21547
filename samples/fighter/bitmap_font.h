// Fighter window: a 3x5 pixel font drawn with filled rectangles, so text needs no font files.
#pragma once

#include <SDL.h>

namespace fighter {

// Draws upper-case letters, digits and " -+:./!" at (x, y); each font pixel is `scale` screen
// pixels. Lower case is drawn as upper case; unknown characters as blanks. Returns the width.
int draw_text(SDL_Renderer* r, int x, int y, int scale, const char* text);
int text_width(int scale, const char* text);

}  // namespace fighter
