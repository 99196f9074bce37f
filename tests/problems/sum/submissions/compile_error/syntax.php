<?php
echo "missing semicolon"
echo 1;
